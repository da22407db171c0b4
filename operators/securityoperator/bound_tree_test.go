package securityoperator

import (
	"context"
	"testing"
	"time"

	"github.com/meshplane/meshplane/apis/fga"
)

// TestBoundTree: an organization's resources include those bound in its
// accounts (nested too), found by the account's own path; another
// organization's bindings (also one whose name extends this one's) never
// join; only workspaces holding a binding or CRD are discovered.
func TestBoundTree(t *testing.T) {
	widgets := fga.Resource{Group: "example.dev", Plural: "widgets", Singular: "widget", Namespaced: true}
	gadgets := fga.Resource{Group: "example.dev", Plural: "gadgets", Singular: "gadget", Namespaced: true}
	evil := fga.Resource{Group: "evil.dev", Plural: "traps", Singular: "trap", Namespaced: true}
	d := &fakeDiscovery{calls: map[string]int{}, bound: map[string][]fga.Resource{
		"teamcl":  {widgets},
		"subcl":   {gadgets, widgets},
		"evilcl":  {evil},
		"acme2cl": {evil},
	}, unserved: map[string]bool{}}
	paths := map[string]string{
		"acmecl": "root:orgs:acme", "teamcl": "root:orgs:acme:team", "subcl": "root:orgs:acme:team:sub",
		"quietcl": "root:orgs:acme:quiet", "evilcl": "root:orgs:evil:team", "acme2cl": "root:orgs:acme2:team",
	}
	pathOf := func(cl string) (string, bool) { p, ok := paths[cl]; return p, ok }
	cache := newBoundCache(d.list, pathOf)
	now := time.Unix(1000, 0)
	cache.now = func() time.Time { return now }
	tree := newBoundTree(cache, pathOf)
	ctx := context.Background()
	get := func(ws string) []string {
		t.Helper()
		rs, err := tree.resources(ctx, ws)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, r := range rs {
			names = append(names, r.ModuleName())
		}
		return names
	}

	if got := get("acmecl"); len(got) != 0 {
		t.Fatalf("before any binding: %v", got)
	}
	for _, cl := range []string{"teamcl", "subcl", "evilcl", "acme2cl"} {
		now = now.Add(time.Minute)
		tree.observe(cl, "apibindings/b", true)
	}
	now = now.Add(time.Minute)
	want := []string{gadgets.ModuleName(), widgets.ModuleName()}
	for _, ws := range []string{"acmecl", "root:orgs:acme"} {
		if got := get(ws); len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
			t.Fatalf("acme's resources by %s: %v, want %v", ws, got, want)
		}
	}
	if d.calls["quietcl"] != 0 {
		t.Fatalf("an account without bindings was discovered %d times", d.calls["quietcl"])
	}
	if d.calls["teamcl"] != 1 || d.calls["subcl"] != 1 {
		t.Fatalf("account discoveries: %v, want one each (cached)", d.calls)
	}
	if got := get("root:orgs:evil"); len(got) != 1 || got[0] != evil.ModuleName() {
		t.Fatalf("evil's resources: %v", got)
	}

	// The binding goes: the account is no longer read, its types leave.
	now = now.Add(time.Minute)
	tree.observe("subcl", "apibindings/b", false)
	now = now.Add(time.Minute)
	if got := get("acmecl"); len(got) != 1 || got[0] != widgets.ModuleName() {
		t.Fatalf("after unbinding in sub: %v", got)
	}
}
