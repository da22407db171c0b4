// Package cluster proves the charts where users run them: a real
// single-node Kubernetes cluster (sdk/testing/kubecluster) gets the images
// `make images` wrote, `helm install` (the real helm CLI) of the umbrella
// chart brings every pod to Ready, `helm test` passes, the platform
// journeys run against the installed platform through the same test code
// as against `make run` (the framework's external mode), and upgrade, a
// deleted core pod, rollback, uninstall and `meshplane-platform install`
// keep or leave what they should. One cluster per package run.
package cluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/meshplane/meshplane/sdk/testing/framework"
	"github.com/meshplane/meshplane/sdk/testing/kubecluster"
)

// The images the charts run, plus the sandbox image: bin/images/<name>.tar.
var images = []string{"pause", "meshplane", "front-proxy", "openfga", "security-operator", "account-operator",
	"rebac-authz-webhook", "graphql-gateway", "meshplane-platform", "mongodb-provider", "postgres-provider"}

var (
	kube *kubecluster.Cluster
	// skip is why the package's tests skip (a prerequisite the kit lacks).
	skip string
	// repo is the repository root.
	repo string
)

func TestMain(m *testing.M) {
	code, err := run(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	os.Exit(code)
}

func run(m *testing.M) (int, error) {
	defer framework.CleanupBinaries()
	if framework.ExternalMode() {
		skip = "it installs the platform into a cluster of its own"
		return m.Run(), nil
	}
	var err error
	if repo, err = framework.RepoRoot(); err != nil {
		return 0, err
	}
	archives, err := imageArchives()
	if err != nil {
		return 0, err
	}
	dir, err := os.MkdirTemp("", "meshplane-cluster-")
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	started := time.Now()
	kube, err = kubecluster.Start(ctx, kubecluster.Options{Dir: dir, Images: archives,
		Logf: func(f string, a ...any) { fmt.Fprintf(os.Stderr, f+"\n", a...) }})
	if kubecluster.IsPrerequisite(err) {
		skip = err.Error()
		return m.Run(), nil
	}
	if err != nil {
		return 0, fmt.Errorf("starting the cluster (state and logs in %s): %w", dir, err)
	}
	fmt.Fprintf(os.Stderr, "cluster: ready in %s (state in %s)\n", time.Since(started).Round(time.Second), dir)
	code := m.Run()
	if err := kube.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stopping the cluster:", err)
	}
	if code == 0 && os.Getenv("MESHPLANE_E2E_KEEP") == "" {
		os.RemoveAll(dir)
	} else {
		fmt.Fprintf(os.Stderr, "cluster state and logs kept in %s\n", dir)
	}
	return code, nil
}

// imageArchives are `make images`' archives: $MESHPLANE_IMAGES_DIR, else
// bin/images. Building them is `make images`' job (make test runs it first).
func imageArchives() ([]string, error) {
	dir := os.Getenv("MESHPLANE_IMAGES_DIR")
	if dir == "" {
		dir = filepath.Join(repo, "bin", "images")
	}
	var out []string
	for _, name := range images {
		p := filepath.Join(dir, name+".tar")
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("image archive %s missing: run `make images` (or set MESHPLANE_IMAGES_DIR): %w", p, err)
		}
		out = append(out, p)
	}
	return out, nil
}

// cluster returns the package's cluster, skipping when the kit cannot run one here.
func cluster(t *testing.T) *kubecluster.Cluster {
	t.Helper()
	if skip != "" {
		t.Skip(skip)
	}
	return kube
}
