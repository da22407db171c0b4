package server

import (
	"context"
	"fmt"

	apisv1alpha1 "github.com/kcp-dev/sdk/apis/apis/v1alpha1"
	apisv1alpha2 "github.com/kcp-dev/sdk/apis/apis/v1alpha2"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"

	"github.com/meshplane/meshplane/core/pkg/apiexport"
	"github.com/meshplane/meshplane/core/pkg/controllers/apibinding"
	apiexportcontroller "github.com/meshplane/meshplane/core/pkg/controllers/apiexport"
	"github.com/meshplane/meshplane/core/pkg/crd"
	"github.com/meshplane/meshplane/core/pkg/registry/builtin"
	"github.com/meshplane/meshplane/core/pkg/registry/local"
	"github.com/meshplane/meshplane/core/pkg/registry/wildcard"
	"github.com/meshplane/meshplane/core/pkg/tenancy"
	"github.com/meshplane/meshplane/core/pkg/virtual/apiexportvw"
)

// apisParts are API sharing's clients, indexes and controllers.
type apisParts struct {
	exports   local.Client[*apisv1alpha2.APIExport]
	bindings  local.Client[*apisv1alpha2.APIBinding]
	schemas   local.Client[*apisv1alpha1.APIResourceSchema]
	slices    local.Client[*apisv1alpha1.APIExportEndpointSlice]
	secrets   local.Client[*corev1.Secret]
	consumers *apiexport.Consumers
	index     *tenancy.Index
	crds      *crd.Index
}

func newAPIs(s builtin.Storage, index *tenancy.Index, crds *crd.Index) *apisParts {
	return &apisParts{
		exports:   client[*apisv1alpha2.APIExport](s, apisv1alpha2.SchemeGroupVersion, "apiexports"),
		bindings:  client[*apisv1alpha2.APIBinding](s, apisv1alpha2.SchemeGroupVersion, "apibindings"),
		schemas:   client[*apisv1alpha1.APIResourceSchema](s, apisv1alpha1.SchemeGroupVersion, "apiresourceschemas"),
		slices:    client[*apisv1alpha1.APIExportEndpointSlice](s, apisv1alpha1.SchemeGroupVersion, "apiexportendpointslices"),
		secrets:   client[*corev1.Secret](s, corev1.SchemeGroupVersion, "secrets"),
		consumers: apiexport.NewConsumers(),
		index:     index,
		crds:      crds,
	}
}

func (a *apisParts) start(ctx context.Context, namespaces local.Client[*corev1.Namespace], externalURL string, crdHandler *crd.Handler) {
	informer := func(st wildcard.Storage, obj runtime.Object) cache.SharedIndexInformer {
		i := wildcard.NewInformer(st, obj)
		go i.RunWithContext(ctx)
		return i
	}
	exportInformer := informer(a.exports.Storage, &apisv1alpha2.APIExport{})
	bindingInformer := informer(a.bindings.Storage, &apisv1alpha2.APIBinding{})
	sliceInformer := informer(a.slices.Storage, &apisv1alpha1.APIExportEndpointSlice{})
	go apiexportcontroller.New(a.exports, a.slices, a.secrets, namespaces, a.index, a.consumers, externalURL,
		exportInformer, sliceInformer).Run(ctx)
	go apibinding.New(a.bindings, a.exports, a.schemas, a.index, a.crds, a.consumers, crdHandler.DeleteAll,
		bindingInformer, exportInformer).Run(ctx)
}

// Export implements apiexportvw.Exports.
func (a *apisParts) Export(ctx context.Context, cluster, name string) (*apisv1alpha2.APIExport, error) {
	e, err := a.exports.GetCached(ctx, cluster, "", name)
	if err == nil && e.Status.IdentityHash != "" {
		return e, nil
	}
	return a.exports.Get(ctx, cluster, "", name)
}

// Resources implements apiexportvw.Exports.
func (a *apisParts) Resources(ctx context.Context, cluster, name string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	export, err := a.Export(ctx, cluster, name)
	if err != nil {
		return nil, err
	}
	var out []*apiextensionsv1.CustomResourceDefinition
	for _, r := range export.Spec.Resources {
		schema, err := a.schemas.Get(ctx, cluster, "", r.Schema)
		if err != nil {
			return nil, fmt.Errorf("schema %s: %w", r.Schema, err)
		}
		def, err := apiexport.SchemaToCRD(schema, export.Status.IdentityHash, cluster)
		if err != nil {
			return nil, err
		}
		out = append(out, def)
	}
	return out, nil
}

// Binding implements apiexportvw.Exports.
func (a *apisParts) Binding(ctx context.Context, consumer, exportCluster, exportName string) (*apisv1alpha2.APIBinding, bool) {
	name, ok := a.consumers.Binds(consumer, exportCluster, exportName)
	if !ok {
		return nil, false
	}
	b, err := a.bindings.Get(ctx, consumer, "", name)
	return b, err == nil
}

// Accepted implements apiexportvw.Exports.
func (a *apisParts) Accepted(consumer, exportCluster, exportName, group, resource string, exported bool) bool {
	return a.consumers.Accepted(consumer, exportCluster, exportName, group, resource, exported)
}

// discoveredCRDs is what discovery shows: in the APIExport virtual
// workspace the export's resources, elsewhere the cluster's CRDs and
// bound resources.
func (a *apisParts) discoveredCRDs(ctx context.Context, cluster string) []*apiextensionsv1.CustomResourceDefinition {
	if t, ok := apiexportvw.From(ctx); ok {
		crds, _ := a.Resources(ctx, t.Cluster, t.Name)
		return crds
	}
	return a.crds.List(cluster)
}
