package server

import (
	"context"
	"errors"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	"k8s.io/apimachinery/pkg/runtime"

	apibindingcontroller "github.com/meshplane/meshplane/core/internal/controllers/apibinding"
	"github.com/meshplane/meshplane/core/internal/crd"
	"github.com/meshplane/meshplane/core/internal/registry/local"
)

// deleteBound deletes every object of a bound resource in cluster; objects
// still held by finalizers are no error here: the binding controller counts
// them (boundRemaining) and says which finalizers hold them.
func (p *parts) deleteBound(ctx context.Context, cluster string, def *apiextensionsv1.CustomResourceDefinition) error {
	if err := p.crdHandler.DeleteAll(ctx, cluster, def); err != nil && !errors.Is(err, crd.ErrObjectsRemain) {
		return err
	}
	return nil
}

// boundRemaining counts the objects of a bound resource left in cluster,
// and the finalizers that hold them.
func (p *parts) boundRemaining(ctx context.Context, cluster string, def *apiextensionsv1.CustomResourceDefinition) (apibindingcontroller.Remaining, error) {
	out := apibindingcontroller.Remaining{Finalizers: map[string]int{}}
	reg, err := p.crdHandler.Registry(def)
	if err != nil {
		return out, err
	}
	list, err := reg.List(local.Context(ctx, cluster, ""), &metainternalversion.ListOptions{})
	if err != nil {
		return out, err
	}
	err = meta.EachListItem(list, func(o runtime.Object) error {
		m, err := meta.Accessor(o)
		if err != nil {
			return err
		}
		out.Objects++
		for _, f := range m.GetFinalizers() {
			out.Finalizers[f]++
		}
		return nil
	})
	return out, err
}
