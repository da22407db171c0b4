package framework

import (
	"os"
	"path/filepath"
)

// BinarySpec names a binary for Binary: its name, the module it lives in
// and its main package there.
type BinarySpec struct{ Name, Module, Pkg string }

// PlatformBinaries are what `meshplane-platform` starts by default: the
// core and every platform component.
var PlatformBinaries = []BinarySpec{
	{"meshplane", "core", "./cmd/meshplane"},
	{"account-operator", "operators", "./cmd/account-operator"},
	{"provider-kubeconfig", "providers", "./cmd/provider-kubeconfig"},
	{"graphql-gateway", "gateway", "./cmd/graphql-gateway"},
	{"openfga", "operators", "./cmd/openfga"},
	{"security-operator", "operators", "./cmd/security-operator"},
	{"rebac-authz-webhook", "webhook", "./cmd/rebac-authz-webhook"},
}

// PlatformBinDir makes a directory for the launcher's --bin-dir: a link
// to each of PlatformBinaries and extra, found by Binary ($<NAME>_BIN,
// bin/<name>, or built). The caller removes dir.
func PlatformBinDir(extra ...BinarySpec) (dir string, err error) {
	if dir, err = os.MkdirTemp("", "meshplane-platform-bin-"); err != nil {
		return "", err
	}
	for _, b := range append(append([]BinarySpec{}, PlatformBinaries...), extra...) {
		bin, err := Binary(b.Name, b.Module, b.Pkg)
		if err != nil {
			os.RemoveAll(dir)
			return "", err
		}
		if err := os.Symlink(bin, filepath.Join(dir, b.Name)); err != nil {
			os.RemoveAll(dir)
			return "", err
		}
	}
	return dir, nil
}
