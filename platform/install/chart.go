package install

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/ignore"
	"sigs.k8s.io/yaml"
)

// UmbrellaChart is the chart the command installs: the directory of that
// name in the embedded charts (github.com/meshplane/meshplane/charts).
const UmbrellaChart = "meshplane"

// loadChart reads the chart in directory dir of fsys. A dependency whose
// repository is "file://<relative dir>" and that the chart does not
// carry under charts/ is read from that directory of the same fsys, so an
// umbrella chart next to its component charts loads without `helm
// dependency build`.
func loadChart(fsys fs.FS, dir string) (*chart.Chart, error) {
	files, err := chartFiles(fsys, dir)
	if err != nil {
		return nil, err
	}
	ch, err := loader.LoadFiles(files)
	if err != nil {
		return nil, fmt.Errorf("loading chart %s: %w", dir, err)
	}
	have := map[string]bool{}
	for _, d := range ch.Dependencies() {
		have[d.Name()] = true
	}
	for _, dep := range ch.Metadata.Dependencies {
		rel, ok := strings.CutPrefix(dep.Repository, "file://")
		if !ok || have[dep.Name] {
			continue
		}
		depDir := path.Clean(path.Join(dir, filepath.ToSlash(rel)))
		if !fs.ValidPath(depDir) {
			return nil, fmt.Errorf("chart %s: dependency %s at %s lies outside the charts directory", dir, dep.Name, dep.Repository)
		}
		sub, err := loadChart(fsys, depDir)
		if err != nil {
			return nil, fmt.Errorf("chart %s: dependency %s: %w", dir, dep.Name, err)
		}
		ch.AddDependency(sub)
		have[dep.Name] = true
	}
	return ch, nil
}

// chartFiles reads the files below dir, named relative to it, as `helm
// package` would take them: .helmignore applies. A chart with file://
// dependencies takes them from their directories only, so what `helm
// dependency build` left under charts/ (a possibly stale copy) is skipped.
func chartFiles(fsys fs.FS, dir string) ([]*loader.BufferedFile, error) {
	rules := ignore.Empty()
	if b, err := fs.ReadFile(fsys, path.Join(dir, ignore.HelmIgnore)); err == nil {
		if rules, err = ignore.Parse(bytes.NewReader(b)); err != nil {
			return nil, fmt.Errorf("chart %s: %s: %w", dir, ignore.HelmIgnore, err)
		}
	}
	rules.AddDefaults()
	skipVendored := false
	if b, err := fs.ReadFile(fsys, path.Join(dir, "Chart.yaml")); err == nil {
		var md chart.Metadata
		if yaml.Unmarshal(b, &md) == nil {
			for _, d := range md.Dependencies {
				skipVendored = skipVendored || strings.HasPrefix(d.Repository, "file://")
			}
		}
	}
	var files []*loader.BufferedFile
	err := fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel := strings.TrimPrefix(p, dir+"/")
		info, err := d.Info()
		if err != nil {
			return err
		}
		if rules.Ignore(rel, info) || (skipVendored && (rel == "charts" || strings.HasPrefix(rel, "charts/"))) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		files = append(files, &loader.BufferedFile{Name: rel, Data: data})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading chart %s: %w", dir, err)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("reading chart %s: no files", dir)
	}
	return files, nil
}

// chartSource is where the umbrella chart comes from: the embedded charts
// or a directory given with --chart.
func chartSource(embedded fs.FS, dir string) (fs.FS, string, error) {
	if dir == "" {
		if embedded == nil {
			return nil, "", fmt.Errorf("this binary embeds no charts: give --chart <directory of the %s chart>", UmbrellaChart)
		}
		return embedded, UmbrellaChart, nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, "", err
	}
	st, err := os.Stat(filepath.Join(abs, "Chart.yaml"))
	if err != nil || !st.Mode().IsRegular() {
		return nil, "", fmt.Errorf("--chart %s: not a chart directory (no Chart.yaml)", dir)
	}
	// The parent is the root so that file://../<component> dependencies resolve.
	return os.DirFS(filepath.Dir(abs)), filepath.Base(abs), nil
}
