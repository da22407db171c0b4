package server

import (
	"strings"
	"testing"

	"github.com/meshplane/meshplane/core/pkg/registry/builtin"
)

// A registry missing from storage is an error that names it, at start-up.
func TestNewRegistriesReportsMissing(t *testing.T) {
	_, err := newRegistries(builtin.Storage{})
	if err == nil {
		t.Fatal("newRegistries of empty storage succeeded, want an error")
	}
	for _, want := range []string{"logicalclusters", "workspaces", "apibindings", "namespaces/finalize"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
}
