package accountbench

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/meshplane/meshplane/bench/pkg/bench/kcpbench"
)

func TestSplitPathAndKeys(t *testing.T) {
	for _, c := range []struct{ path, parent, name string }{
		{"root:orgs", "root", "orgs"}, {"root:orgs:acme", "root:orgs", "acme"}, {"root", "", "root"},
	} {
		if p, n := splitPath(c.path); p != c.parent || n != c.name {
			t.Errorf("splitPath(%q) = %q, %q; want %q, %q", c.path, p, n, c.parent, c.name)
		}
	}
	if got := keyOf("100 orgs + 1000 accounts"); got != "100_orgs_1000_accounts" {
		t.Errorf("keyOf = %q", got)
	}
}

// TestObserveMarksReadyAccounts: only an Account whose Ready condition is
// True counts, keyed by its logical cluster and name.
func TestObserveMarksReadyAccounts(t *testing.T) {
	b := &runner{tracker: kcpbench.NewTracker()}
	acc := func(name, ready string) *unstructured.Unstructured {
		u := account(target{name: name, typ: "org"})
		u.SetAnnotations(map[string]string{clusterAnnotation: "c1"})
		_ = unstructured.SetNestedSlice(u.Object, []any{
			map[string]any{"type": "WorkspaceReady", "status": "True"},
			map[string]any{"type": "Ready", "status": ready},
		}, "status", "conditions")
		return u
	}
	b.observe(acc("a", "False"))
	b.observe(acc("b", "True"))
	if b.tracker.IsReady("c1/a") || !b.tracker.IsReady("c1/b") {
		t.Errorf("ready: a=%v b=%v, want a not ready and b ready", b.tracker.IsReady("c1/a"), b.tracker.IsReady("c1/b"))
	}
}
