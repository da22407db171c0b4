// Package apibinding admits APIBindings and APIExportEndpointSlices only
// for users allowed to bind the referenced APIExport: verb "bind" on
// apiexports/<name> in the export's workspace, as kcp requires (and, as in
// kcp, nothing more there: the authorizer it is given does not ask for
// access to that workspace).
package apibinding

import (
	"context"
	"fmt"

	apisv1alpha1 "github.com/kcp-dev/sdk/apis/apis/v1alpha1"
	apisv1alpha2 "github.com/kcp-dev/sdk/apis/apis/v1alpha2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/meshplane/meshplane/core/internal/clusters"
)

// Resolver maps workspace paths to clusters.
type Resolver func(path string) (string, bool)

// ExportExists reports whether an APIExport exists in a cluster.
type ExportExists func(ctx context.Context, cluster, name string) bool

// Plugin is the admission plugin.
type Plugin struct {
	*admission.Handler
	Resolve    Resolver
	Authorizer authorizer.Authorizer
	// Exists: an endpoint slice naming an export by path is refused when
	// the export is not there, as kcp looks it up (a slice naming an
	// export of its own workspace is not looked up, as in kcp).
	Exists ExportExists
}

var _ admission.ValidationInterface = &Plugin{}

// New returns the plugin.
func New(resolve Resolver, authz authorizer.Authorizer, exists ExportExists) *Plugin {
	return &Plugin{Handler: admission.NewHandler(admission.Create), Resolve: resolve, Authorizer: authz, Exists: exists}
}

// Validate implements admission.ValidationInterface.
func (p *Plugin) Validate(ctx context.Context, a admission.Attributes, o admission.ObjectInterfaces) error {
	if a.GetResource().GroupResource() == apisv1alpha1.Resource("apiexportendpointslices") && a.GetSubresource() == "" {
		return p.validateSlice(ctx, a)
	}
	if a.GetResource().GroupResource() != apisv1alpha2.Resource("apibindings") || a.GetSubresource() != "" {
		return nil
	}
	b, ok := a.GetObject().(*apisv1alpha2.APIBinding)
	if !ok || b.Spec.Reference.Export == nil {
		return nil
	}
	ref := b.Spec.Reference.Export
	exportCluster, _ := clusters.From(ctx)
	if ref.Path != "" {
		if exportCluster, ok = p.Resolve(ref.Path); !ok {
			return apierrors.NewNotFound(apisv1alpha2.Resource("apiexports"), refString(ref))
		}
	}
	attrs := authorizer.AttributesRecord{User: a.GetUserInfo(), Verb: "bind", APIGroup: apisv1alpha2.SchemeGroupVersion.Group,
		APIVersion: apisv1alpha2.SchemeGroupVersion.Version, Resource: "apiexports", Name: ref.Name, ResourceRequest: true}
	if d, _, _ := p.Authorizer.Authorize(clusters.WithCluster(ctx, exportCluster), attrs); d != authorizer.DecisionAllow {
		return apierrors.NewForbidden(apisv1alpha2.Resource("apibindings"), b.Name,
			fmt.Errorf("user %q may not bind APIExport %s (needs verb bind on apiexports/%s there)", a.GetUserInfo().GetName(), refString(ref), ref.Name))
	}
	return nil
}

// validateSlice admits an APIExportEndpointSlice whose creator may bind
// its export, with kcp's one message for a missing export and a missing
// permission (it does not tell whether a workspace exists).
func (p *Plugin) validateSlice(ctx context.Context, a admission.Attributes) error {
	s, ok := a.GetObject().(*apisv1alpha1.APIExportEndpointSlice)
	if !ok {
		return nil
	}
	ref := s.Spec.APIExport
	if ref.Name == "" {
		return admission.NewForbidden(a, field.Required(field.NewPath("spec", "export", "name"), ""))
	}
	display := ref.Name
	if ref.Path != "" {
		display = ref.Path + ":" + ref.Name
	}
	forbidden := admission.NewForbidden(a, fmt.Errorf("unable to create APIExportEndpointSlice: no permission to bind to export %s", display))
	exportCluster, _ := clusters.From(ctx)
	if ref.Path != "" {
		if exportCluster, ok = p.Resolve(ref.Path); !ok || !p.Exists(ctx, exportCluster, ref.Name) {
			return forbidden
		}
	}
	attrs := authorizer.AttributesRecord{User: a.GetUserInfo(), Verb: "bind", APIGroup: apisv1alpha2.SchemeGroupVersion.Group,
		APIVersion: apisv1alpha2.SchemeGroupVersion.Version, Resource: "apiexports", Name: ref.Name, ResourceRequest: true}
	if d, _, _ := p.Authorizer.Authorize(clusters.WithCluster(ctx, exportCluster), attrs); d != authorizer.DecisionAllow {
		return forbidden
	}
	return nil
}

func refString(ref *apisv1alpha2.ExportBindingReference) string {
	if ref.Path == "" {
		return ref.Name
	}
	return ref.Path + ":" + ref.Name
}
