package clusters

import (
	"testing"

	"github.com/meshplane/meshplane/apis/core/v1alpha1"
)

func TestOrgOf(t *testing.T) {
	for path, want := range map[string]string{"root:orgs:acme": "acme", "root:orgs:acme:team:sub": "acme", "root:orgs": "", "root:other:x": "", "root:orgs:": ""} {
		got, ok := OrgOf(path)
		if got != want || ok != (want != "") {
			t.Errorf("OrgOf(%q) = %q, %v; want %q", path, got, ok, want)
		}
	}
}

func TestRegistry(t *testing.T) {
	r := NewRegistry()
	if r.Synced() {
		t.Fatal("a new registry must not be synced")
	}
	ai := &v1alpha1.AccountInfo{Spec: v1alpha1.AccountInfoSpec{
		Account:      v1alpha1.AccountLocation{Name: "team", OriginClusterID: "orgc", Path: "root:orgs:acme:team"},
		Organization: v1alpha1.AccountLocation{Name: "acme"},
		FGA:          v1alpha1.FGAInfo{Store: v1alpha1.StoreInfo{ID: "s1"}},
	}}
	r.Set(InfoOf("c1", ai))
	info, first, ok := r.Get("c1")
	if !ok || info.Org != "acme" || info.Account != "team" || info.OriginCluster != "orgc" || info.StoreID != "s1" || first.IsZero() {
		t.Fatalf("Get(c1) = %+v, %v, %v", info, first, ok)
	}
	// A recreated organization: the new store replaces the old one, the
	// first-seen time stays.
	ai.Spec.FGA.Store.ID = "s2"
	r.Set(InfoOf("c1", ai))
	info, again, _ := r.Get("c1")
	if info.StoreID != "s2" || !again.Equal(first) {
		t.Errorf("after the store changed: %+v (first seen %v, was %v)", info, again, first)
	}
	if got, ok := r.ByPath("root:orgs:acme:team"); !ok || got.Cluster != "c1" {
		t.Errorf("ByPath(root:orgs:acme:team) = %+v, %v", got, ok)
	}
	// The workspace at the path is now another cluster (a recreated org).
	r.Set(InfoOf("c2", ai))
	r.Delete("c1")
	if _, _, ok := r.Get("c1"); ok || r.Len() != 1 {
		t.Errorf("c1 still known after Delete")
	}
	if got, ok := r.ByPath("root:orgs:acme:team"); !ok || got.Cluster != "c2" {
		t.Errorf("ByPath after c1's deletion = %+v, %v; want c2", got, ok)
	}
	r.Delete("c2")
	if _, ok := r.ByPath("root:orgs:acme:team"); ok {
		t.Errorf("ByPath still answers after every cluster was deleted")
	}
}
