package kcpbench

import "fmt"

// TreeNode is one workspace of a benchmark tree.
type TreeNode struct {
	Name   string // workspace name, unique within the tree
	Parent int    // index of the parent node; -1 for the top node
	Path   string // full workspace path, e.g. root:org:t-0:t-3
}

// TreeLayout lays out n workspaces as a tree below the workspace base:
// node 0 is the top (a child of base), and node i > 0 is a child of node
// (i-1)/fanout, so every node has up to fanout children and the nodes are
// numbered breadth-first. A parent always has a lower index than its
// children, so creating the nodes in index order never needs a parent that
// was not created yet. Node names are <prefix><i>.
func TreeLayout(base, prefix string, n, fanout int) []TreeNode {
	if n <= 0 {
		return nil
	}
	if fanout < 1 {
		fanout = 1
	}
	nodes := make([]TreeNode, n)
	for i := range nodes {
		name := fmt.Sprintf("%s%d", prefix, i)
		if i == 0 {
			nodes[i] = TreeNode{Name: name, Parent: -1, Path: base + ":" + name}
			continue
		}
		p := (i - 1) / fanout
		nodes[i] = TreeNode{Name: name, Parent: p, Path: nodes[p].Path + ":" + name}
	}
	return nodes
}

// ParentPath returns the path of the workspace a tree node is created in.
func ParentPath(base string, nodes []TreeNode, i int) string {
	if nodes[i].Parent < 0 {
		return base
	}
	return nodes[nodes[i].Parent].Path
}

// TreeDepth is the number of levels of a layout (0 for an empty one).
func TreeDepth(nodes []TreeNode) int {
	depth := make([]int, len(nodes))
	maxDepth := 0
	for i, nd := range nodes {
		depth[i] = 1
		if nd.Parent >= 0 {
			depth[i] = depth[nd.Parent] + 1
		}
		maxDepth = max(maxDepth, depth[i])
	}
	return maxDepth
}

// Children returns, for each node, the indices of its children.
func Children(nodes []TreeNode) [][]int {
	out := make([][]int, len(nodes))
	for i, nd := range nodes {
		if nd.Parent >= 0 {
			out[nd.Parent] = append(out[nd.Parent], i)
		}
	}
	return out
}
