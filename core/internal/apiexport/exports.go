package apiexport

import (
	"context"
	"fmt"

	apisv1alpha1 "github.com/kcp-dev/sdk/apis/apis/v1alpha1"
	apisv1alpha2 "github.com/kcp-dev/sdk/apis/apis/v1alpha2"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/meshplane/meshplane/core/internal/reconciler/client"
)

// Exports answers what the APIExport virtual workspace asks about exports
// and their consumers (it implements apiexportvw.Exports).
type Exports struct {
	Exports   client.Reader[*apisv1alpha2.APIExport]
	Bindings  client.Reader[*apisv1alpha2.APIBinding]
	Schemas   client.Reader[*apisv1alpha1.APIResourceSchema]
	Consumers *Consumers
	// Builtin are the groups the built-in registries serve.
	Builtin map[string]bool
	// ServedIdentity returns the identity under which a consumer serves
	// group/resource ("" for a CRD of its own), if it serves it.
	ServedIdentity func(consumer, group, resource string) (string, bool)
}

// Serves reports whether consumer serves group/resource bound under
// identity.
func (e *Exports) Serves(consumer, group, resource, identity string) bool {
	if e.ServedIdentity == nil {
		return false
	}
	id, ok := e.ServedIdentity(consumer, group, resource)
	return ok && id == identity
}

// Export returns an export, from the cache when it already has its
// identity.
func (e *Exports) Export(ctx context.Context, cluster, name string) (*apisv1alpha2.APIExport, error) {
	export, err := e.Exports.GetCached(ctx, cluster, "", name)
	if err == nil && export.Status.IdentityHash != "" {
		return export, nil
	}
	return e.Exports.Get(ctx, cluster, "", name)
}

// Resources returns the CRDs of the export's resources. The schemas come
// from the watch cache (they are immutable), from storage only when not
// cached yet: the virtual workspace asks on every request.
func (e *Exports) Resources(ctx context.Context, cluster, name string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	export, err := e.Export(ctx, cluster, name)
	if err != nil {
		return nil, err
	}
	var out []*apiextensionsv1.CustomResourceDefinition
	for _, r := range export.Spec.Resources {
		schema, err := client.CachedOrLive(ctx, e.Schemas, cluster, "", r.Schema)
		if err != nil {
			return nil, fmt.Errorf("schema %s: %w", r.Schema, err)
		}
		def, err := SchemaToCRD(schema, export.Status.IdentityHash)
		if err != nil {
			return nil, err
		}
		out = append(out, def)
	}
	return out, nil
}

// Binding returns the consumer's binding of the export, if any.
func (e *Exports) Binding(ctx context.Context, consumer, exportCluster, exportName string) (*apisv1alpha2.APIBinding, bool) {
	name, ok := e.Consumers.Binds(consumer, exportCluster, exportName)
	if !ok {
		return nil, false
	}
	b, err := client.CachedOrLive(ctx, e.Bindings, consumer, "", name)
	return b, err == nil
}

// Accepted reports whether consumer binds the export and, for a claimed
// resource, accepted the claim.
func (e *Exports) Accepted(consumer, exportCluster, exportName, group, resource string, exported bool) bool {
	return e.Consumers.Accepted(consumer, exportCluster, exportName, group, resource, exported)
}

// Claim returns the claim on group/resource that consumer's binding of
// the export applies, if any.
func (e *Exports) Claim(consumer, exportCluster, exportName, group, resource string) (Claim, bool) {
	return e.Consumers.Claim(consumer, exportCluster, exportName, group, resource)
}
