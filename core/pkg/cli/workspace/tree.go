package workspace

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// treeOptions implements "kubectl ws tree".
type treeOptions struct {
	*options
	full bool

	seen map[string]bool // paths listed so far, a guard against cycles
}

// treeNode is one workspace in the printed tree.
type treeNode struct {
	name     string
	children []*treeNode
}

func (o *treeOptions) run(ctx context.Context) error {
	_, current, c, err := o.currentWorkspace()
	if err != nil {
		return err
	}
	name := current
	if !o.full {
		name = baseName(current)
	}
	root := &treeNode{name: name}
	o.seen = map[string]bool{}
	if err := o.populate(ctx, c, root, current, true); err != nil {
		return err
	}
	return writeTree(o.out, root)
}

// populate lists the children of the workspace p into n, recursively. Below
// the starting workspace, workspaces that are gone or not readable are leaves.
func (o *treeOptions) populate(ctx context.Context, c *client, n *treeNode, p string, top bool) error {
	if o.seen[p] {
		return nil
	}
	o.seen[p] = true
	list, err := c.listWorkspaces(ctx, p)
	if err != nil {
		if apierrors.IsNotFound(err) || (!top && apierrors.IsForbidden(err)) {
			return nil
		}
		return err
	}
	items := list.Items
	sort.Slice(items, func(i, j int) bool { return items[i].Name < items[j].Name })
	for _, ws := range items {
		childPath := joinPath(p, ws.Name)
		if _, fromURL, err := parseClusterURL(ws.Spec.URL); err == nil {
			childPath = fromURL
		}
		name := ws.Name
		if o.full {
			name = joinPath(n.name, ws.Name)
		}
		child := &treeNode{name: name}
		n.children = append(n.children, child)
		if err := o.populate(ctx, c, child, childPath, false); err != nil {
			return err
		}
	}
	return nil
}

// writeTree prints the tree like kcp's plugin does:
//
//	.
//	└── root
//	    ├── a
//	    │   └── b
//	    └── c
func writeTree(out io.Writer, root *treeNode) error {
	var b strings.Builder
	b.WriteString(".\n")
	writeBranch(&b, root, "", true)
	_, err := fmt.Fprint(out, b.String())
	return err
}

func writeBranch(b *strings.Builder, n *treeNode, indent string, last bool) {
	connector, childIndent := "├── ", "│   "
	if last {
		connector, childIndent = "└── ", "    "
	}
	b.WriteString(indent + connector + n.name + "\n")
	for i, c := range n.children {
		writeBranch(b, c, indent+childIndent, i == len(n.children)-1)
	}
}
