package kcpbench

import (
	"strings"
	"testing"
)

func TestTreeLayoutSmall(t *testing.T) {
	nodes := TreeLayout("root:org", "t-", 13, 3)
	want := []struct {
		parent int
		path   string
	}{
		{-1, "root:org:t-0"},
		{0, "root:org:t-0:t-1"},
		{0, "root:org:t-0:t-2"},
		{0, "root:org:t-0:t-3"},
		{1, "root:org:t-0:t-1:t-4"},
		{1, "root:org:t-0:t-1:t-5"},
		{1, "root:org:t-0:t-1:t-6"},
		{2, "root:org:t-0:t-2:t-7"},
		{2, "root:org:t-0:t-2:t-8"},
		{2, "root:org:t-0:t-2:t-9"},
		{3, "root:org:t-0:t-3:t-10"},
		{3, "root:org:t-0:t-3:t-11"},
		{3, "root:org:t-0:t-3:t-12"},
	}
	if len(nodes) != len(want) {
		t.Fatalf("got %d nodes", len(nodes))
	}
	for i, w := range want {
		if nodes[i].Parent != w.parent || nodes[i].Path != w.path || !strings.HasSuffix(w.path, ":"+nodes[i].Name) {
			t.Errorf("node %d: %+v, want parent %d path %s", i, nodes[i], w.parent, w.path)
		}
	}
	if d := TreeDepth(nodes); d != 3 {
		t.Errorf("depth %d, want 3", d)
	}
	if got := ParentPath("root:org", nodes, 0); got != "root:org" {
		t.Errorf("parent of top: %s", got)
	}
	if got := ParentPath("root:org", nodes, 12); got != "root:org:t-0:t-3" {
		t.Errorf("parent of 12: %s", got)
	}
}

func TestTreeLayoutThousand(t *testing.T) {
	nodes := TreeLayout("root:b", "t-", 1000, 10)
	if len(nodes) != 1000 {
		t.Fatalf("got %d nodes", len(nodes))
	}
	// 1 + 10 + 100 + 889 nodes on four levels.
	if d := TreeDepth(nodes); d != 4 {
		t.Errorf("depth %d, want 4", d)
	}
	kids := Children(nodes)
	parents := 0
	seen := map[string]bool{}
	for i, nd := range nodes {
		if nd.Parent >= i {
			t.Fatalf("node %d has parent %d (not created before it)", i, nd.Parent)
		}
		if len(kids[i]) > 10 {
			t.Fatalf("node %d has %d children", i, len(kids[i]))
		}
		if len(kids[i]) > 0 {
			parents++
		}
		if seen[nd.Path] {
			t.Fatalf("duplicate path %s", nd.Path)
		}
		seen[nd.Path] = true
	}
	// Nodes 0..99 have 10 children each except 99 (nodes 991..999: 9).
	if parents != 100 || len(kids[99]) != 9 || len(kids[0]) != 10 {
		t.Errorf("parents %d, children of 99: %d", parents, len(kids[99]))
	}
	if got := nodes[999].Path; got != "root:b:t-0:t-9:t-99:t-999" {
		t.Errorf("path of 999: %s", got)
	}
}

func TestTreeLayoutEdgeCases(t *testing.T) {
	if TreeLayout("root", "t-", 0, 10) != nil {
		t.Error("n=0 should be empty")
	}
	if d := TreeDepth(nil); d != 0 {
		t.Errorf("empty depth %d", d)
	}
	chain := TreeLayout("root", "t-", 4, 0) // fan-out clamped to 1: a chain
	if TreeDepth(chain) != 4 || chain[3].Path != "root:t-0:t-1:t-2:t-3" {
		t.Errorf("chain: %+v", chain)
	}
}
