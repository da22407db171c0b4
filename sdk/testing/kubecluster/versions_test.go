package kubecluster

import (
	"os"
	"strings"
	"testing"
)

// TestVersionsMatchTools: the versions the kit looks for in the cache are
// the ones tools/kubernetes and tools/coredns pin (and
// scripts/build-kubernetes.sh builds).
func TestVersionsMatchTools(t *testing.T) {
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []struct{ file, module, version string }{
		{"tools/kubernetes/go.mod", "k8s.io/kubernetes", KubernetesVersion},
		{"tools/coredns/go.mod", "github.com/coredns/coredns", CoreDNSVersion},
	} {
		b, err := os.ReadFile(root + "/" + want.file)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, line := range strings.Split(string(b), "\n") {
			f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(line), "require "))
			if len(f) >= 2 && f[0] == want.module {
				found = true
				if f[1] != want.version {
					t.Errorf("%s requires %s %s; the kit looks for %s", want.file, want.module, f[1], want.version)
				}
			}
		}
		if !found {
			t.Errorf("%s does not require %s", want.file, want.module)
		}
	}
}
