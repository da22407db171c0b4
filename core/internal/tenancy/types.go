package tenancy

import (
	"context"
	"fmt"
	"strings"

	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/meshplane/meshplane/core/internal/clusters"
	"github.com/meshplane/meshplane/core/internal/reconciler/client"
)

// Types resolves workspace types and their alias sets.
type Types struct {
	Index *Index
	Store client.Reader[*tenancyv1alpha1.WorkspaceType]
	// Elsewhere, when set, reads a type in a workspace this shard does not
	// hold (another shard's); nil and NotFound mean not there.
	Elsewhere func(ctx context.Context, path, name string) (*tenancyv1alpha1.WorkspaceType, error)
}

// Type is a resolved workspace type with the path of its workspace.
type Type struct {
	*tenancyv1alpha1.WorkspaceType
	Path string
}

// Ref is the type's reference with its path.
func (t Type) Ref() tenancyv1alpha1.WorkspaceTypeReference {
	return tenancyv1alpha1.WorkspaceTypeReference{Name: tenancyv1alpha1.WorkspaceTypeName(t.Name), Path: t.Path}
}

// ID is <path>:<name>, how types are named in annotations.
func (t Type) ID() string { return t.Path + ":" + t.Name }

// Initializer is the type's initializer id: <cluster of its workspace>:<name>.
func (t Type) Initializer() corev1alpha1.LogicalClusterInitializer {
	return corev1alpha1.LogicalClusterInitializer(t.Annotations[clusters.Annotation] + ":" + t.Name)
}

// Terminator is the type's terminator id.
func (t Type) Terminator() corev1alpha1.LogicalClusterTerminator {
	return corev1alpha1.LogicalClusterTerminator(t.Annotations[clusters.Annotation] + ":" + t.Name)
}

// Resolve finds the type ref names. Without a path the type is looked up in
// the workspace at fromPath and then in each of its ancestors.
func (t *Types) Resolve(ctx context.Context, ref tenancyv1alpha1.WorkspaceTypeReference, fromPath string) (Type, error) {
	candidates := []string{ref.Path}
	if ref.Path == "" {
		candidates = ancestors(fromPath)
	}
	for _, p := range candidates {
		cluster, ok := t.Index.Resolve(p)
		if !ok {
			if t.Elsewhere == nil {
				continue
			}
			wt, err := t.Elsewhere(ctx, p, string(ref.Name))
			if apierrors.IsNotFound(err) {
				continue
			}
			if err != nil {
				return Type{}, err
			}
			return Type{WorkspaceType: wt, Path: p}, nil
		}
		wt, err := client.CachedOrLive(ctx, t.Store, cluster, "", string(ref.Name))
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return Type{}, err
		}
		return Type{WorkspaceType: wt, Path: t.Index.Path(cluster)}, nil
	}
	where := ref.Path
	if where == "" {
		where = fromPath + " or its ancestors"
	}
	return Type{}, fmt.Errorf("workspace type %q not found in %s", ref.Name, where)
}

// Aliases returns every type wt extends, transitively, then wt itself, in
// kcp's order: each extended type (as spec.extend.with lists them) is
// followed by the types it extends in turn, depth first, each type once.
// Initializers and terminators come out in this order, as in kcp.
func (t *Types) Aliases(ctx context.Context, wt Type) ([]Type, error) {
	seen := map[string]bool{wt.ID(): true}
	out, err := t.extended(ctx, wt, seen)
	if err != nil {
		return nil, err
	}
	return append(out, wt), nil
}

// extended returns the types wt extends, depth first, skipping seen ones.
func (t *Types) extended(ctx context.Context, wt Type, seen map[string]bool) ([]Type, error) {
	var out []Type
	for _, ref := range wt.Spec.Extend.With {
		ext, err := t.Resolve(ctx, ref, wt.Path)
		if err != nil {
			return nil, fmt.Errorf("type %s extends %s: %w", wt.ID(), ref.String(), err)
		}
		if seen[ext.ID()] {
			continue
		}
		seen[ext.ID()] = true
		below, err := t.extended(ctx, ext, seen)
		if err != nil {
			return nil, err
		}
		out = append(append(out, ext), below...)
	}
	return out, nil
}

// Lifecycle returns the initializers and terminators of an alias set.
func Lifecycle(aliases []Type) ([]corev1alpha1.LogicalClusterInitializer, []corev1alpha1.LogicalClusterTerminator) {
	var inits []corev1alpha1.LogicalClusterInitializer
	var terms []corev1alpha1.LogicalClusterTerminator
	bindings := false
	for _, a := range aliases {
		bindings = bindings || len(a.Spec.DefaultAPIBindings) > 0
		if a.Spec.Initializer {
			inits = append(inits, a.Initializer())
		}
		if a.Spec.Terminator {
			terms = append(terms, a.Terminator())
		}
	}
	if bindings {
		inits = append(inits, tenancyv1alpha1.WorkspaceAPIBindingsInitializer)
	}
	return inits, terms
}

// CheckCompatible applies kcp's rules: every parent alias that limits its
// children must list one of the child's aliases, and every child alias that
// limits its parents must list one of the parent's aliases.
func CheckCompatible(parent, child []Type) error {
	for _, p := range parent {
		if l := p.Spec.LimitAllowedChildren; l != nil {
			if l.None {
				return fmt.Errorf("workspace type %s does not allow child workspaces", p.ID())
			}
			if len(l.Types) > 0 && !anyListed(l.Types, child, p.Path) {
				return fmt.Errorf("workspace type %s only allows children of types %s", p.ID(), refs(l.Types, p.Path))
			}
		}
	}
	for _, c := range child {
		if l := c.Spec.LimitAllowedParents; l != nil {
			if l.None {
				return fmt.Errorf("workspace type %s does not allow a parent workspace", c.ID())
			}
			if len(l.Types) > 0 && !anyListed(l.Types, parent, c.Path) {
				return fmt.Errorf("workspace type %s only allows parents of types %s", c.ID(), refs(l.Types, c.Path))
			}
		}
	}
	return nil
}

func anyListed(list []tenancyv1alpha1.WorkspaceTypeReference, types []Type, relativeTo string) bool {
	for _, ref := range list {
		for _, t := range types {
			if string(ref.Name) == t.Name && (ref.Path == "" || ref.Path == t.Path) {
				return true
			}
		}
	}
	return false
}

func refs(list []tenancyv1alpha1.WorkspaceTypeReference, relativeTo string) string {
	var s []string
	for _, r := range list {
		p := r.Path
		if p == "" {
			p = relativeTo
		}
		s = append(s, p+":"+string(r.Name))
	}
	return strings.Join(s, ", ")
}

// ancestors returns path and its ancestors, nearest first.
func ancestors(path string) []string {
	var out []string
	for p := path; p != ""; {
		out = append(out, p)
		i := strings.LastIndex(p, ":")
		if i < 0 {
			break
		}
		p = p[:i]
	}
	return out
}

// Parent returns the parent path of path ("" for a root).
func Parent(path string) string {
	i := strings.LastIndex(path, ":")
	if i < 0 {
		return ""
	}
	return path[:i]
}
