package index

import "testing"

func TestLookup(t *testing.T) {
	i := New()
	i.SetShard(Shard{Name: "root", BaseURL: "https://root"}, false)
	i.SetShard(Shard{Name: "b", BaseURL: "https://b"}, false)
	i.SetCluster("root", "root", "root", false)
	i.SetCluster("b", "c1", "root:org", false)
	i.SetCluster("root", "c2", "root:org:child", false)
	i.SetMounted("c1", "remote", true)

	for _, tc := range []struct {
		in, want string
	}{
		{"root", "root"},
		{"root:org", "b"},
		{"c1", "b"},
		{"root:org:child", "root"},
		{"c2", "root"},
		{"root:org:remote", "b"}, // a mount: its parent's shard
		{"root:org:nothing", ""},
		{"root:nothing:remote", ""},
		{"unknown", ""},
		{"root:", ""},
	} {
		got, ok := i.Lookup(tc.in)
		if got.Name != tc.want || ok != (tc.want != "") {
			t.Errorf("Lookup(%q) = %q, %v; want %q", tc.in, got.Name, ok, tc.want)
		}
	}

	// A cluster moving to another path and going away.
	i.SetCluster("b", "c1", "root:renamed", false)
	if _, ok := i.Lookup("root:org"); ok {
		t.Errorf("the old path still routes")
	}
	i.SetCluster("b", "c1", "root:renamed", true)
	if _, ok := i.Lookup("c1"); ok {
		t.Errorf("a deleted cluster still routes")
	}
	// A shard that goes takes its routes with it.
	i.DropShardClusters("root")
	i.SetShard(Shard{Name: "root"}, true)
	if _, ok := i.Lookup("root:org:child"); ok {
		t.Errorf("a cluster of a dropped shard still routes")
	}
	i.SetMounted("c1", "remote", false)
	if _, ok := i.Lookup("root:org:remote"); ok {
		t.Errorf("an unmounted workspace still routes")
	}
}
