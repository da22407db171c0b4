package server

import (
	"context"
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/meshplane/meshplane/core/internal/controllers/permissionclaimlabel"
	"github.com/meshplane/meshplane/core/internal/registry/local"
)

func (p *parts) installPermissionClaimLabel() controller {
	return permissionclaimlabel.New(p.consumers, claimedObjects{p})
}

// claimedObjects lists and relabels the objects of a resource in a
// cluster through its registry: built-in, custom or bound.
type claimedObjects struct{ p *parts }

// registryOf returns the registry of gr in cluster.
func (c claimedObjects) registryOf(cluster string, gr schema.GroupResource) (rest.Storage, bool, error) {
	for gv, byPath := range c.p.storage {
		if gv.Group != gr.Group {
			continue
		}
		if st, ok := byPath[gr.Resource]; ok {
			s, _ := st.(rest.Scoper)
			return st, s != nil && s.NamespaceScoped(), nil
		}
	}
	for _, d := range c.p.crdIndex.List(cluster) {
		if d.Spec.Group == gr.Group && d.Spec.Names.Plural == gr.Resource {
			reg, err := c.p.crdHandler.Registry(d)
			return reg, d.Spec.Scope == apiextensionsv1.NamespaceScoped, err
		}
	}
	return nil, false, nil
}

func (c claimedObjects) List(ctx context.Context, cluster string, gr schema.GroupResource) ([]permissionclaimlabel.Object, bool, error) {
	st, _, err := c.registryOf(cluster, gr)
	if err != nil || st == nil {
		return nil, false, err
	}
	lister, ok := st.(rest.Lister)
	updater, ok2 := st.(rest.Updater)
	if !ok || !ok2 {
		return nil, false, nil // not stored (reviews and the like)
	}
	list, err := lister.List(local.Context(ctx, cluster, ""), &metainternalversion.ListOptions{})
	if err != nil {
		return nil, true, err
	}
	var out []permissionclaimlabel.Object
	err = meta.EachListItem(list, func(o runtime.Object) error {
		m, err := meta.Accessor(o)
		if err != nil {
			return err
		}
		obj := o
		out = append(out, permissionclaimlabel.Object{Namespace: m.GetNamespace(), Name: m.GetName(), Labels: m.GetLabels(),
			SetLabels: func(ctx context.Context, labels map[string]string) error {
				upd := obj.DeepCopyObject()
				um, err := meta.Accessor(upd)
				if err != nil {
					return err
				}
				um.SetLabels(labels)
				_, _, err = updater.Update(local.Context(ctx, cluster, um.GetNamespace()), um.GetName(), rest.DefaultUpdatedObjectInfo(upd),
					rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
				return err
			}})
		return nil
	})
	if err != nil {
		return nil, true, fmt.Errorf("reading the list of %s: %w", gr, err)
	}
	return out, true, nil
}
