// Package charts holds the platform's Helm charts: one per component and
// the umbrella chart meshplane that installs them all, so that
// `meshplane-platform install` works without a checkout.
//
// In the repository the umbrella chart names its dependencies as
// file://../<component>; UmbrellaFiles lays them out as Helm expects a
// packaged chart (meshplane/charts/<component>/...), ready for Helm's
// loader.LoadFiles, so no `helm dependency build` is needed.
package charts

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"strings"
)

// FS holds every chart directory.
//
//go:embed all:meshplane all:core all:openfga all:rebac-authz-webhook all:account-operator all:security-operator all:graphql-gateway all:examples
var FS embed.FS

// Umbrella is the name of the chart that installs the whole platform.
const Umbrella = "meshplane"

// Components are the charts the umbrella chart depends on, by directory.
var Components = []string{"core", "openfga", "rebac-authz-webhook", "account-operator", "security-operator", "graphql-gateway", "examples"}

// File is one file of a chart: its path relative to the chart's root (as
// Helm's loader.BufferedFile names it) and its content.
type File struct {
	Name string
	Data []byte
}

// Files returns the files of chart dir (one of FS's directories), relative
// to it. Dependency archives a `helm dependency build` left in charts/
// are skipped: the components come from FS.
func Files(dir string) ([]File, error) {
	var out []File
	err := fs.WalkDir(FS, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel := strings.TrimPrefix(p, dir+"/")
		if strings.HasPrefix(rel, "charts/") {
			return nil
		}
		b, err := FS.ReadFile(p)
		if err != nil {
			return err
		}
		out = append(out, File{Name: rel, Data: b})
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("charts: no chart %q", dir)
	}
	return out, nil
}

// UmbrellaFiles returns the umbrella chart with every component chart
// under charts/<component>/, as a packaged chart holds its dependencies.
func UmbrellaFiles() ([]File, error) {
	out, err := Files(Umbrella)
	if err != nil {
		return nil, err
	}
	for _, c := range Components {
		files, err := Files(c)
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			out = append(out, File{Name: path.Join("charts", c, f.Name), Data: f.Data})
		}
	}
	return out, nil
}
