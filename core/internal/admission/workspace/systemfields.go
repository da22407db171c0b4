package workspace

import (
	"context"
	"fmt"

	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apiserver/pkg/admission"

	"github.com/meshplane/meshplane/core/internal/authorization/privileged"
	"github.com/meshplane/meshplane/core/internal/clusters"
	"github.com/meshplane/meshplane/core/internal/tenancy"
)

// Validate implements admission.ValidationInterface: a Workspace's
// system-only fields are written by system identities only, and a
// system identity may name in spec.cluster only a logical cluster that
// no other Workspace owns.
func (p *Plugin) Validate(ctx context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	if a.GetResource().GroupResource() != tenancyv1alpha1.Resource("workspaces") {
		return nil
	}
	ws, ok := a.GetObject().(*tenancyv1alpha1.Workspace)
	if !ok {
		return nil
	}
	system := privileged.System(ctx, a.GetUserInfo())
	switch a.GetOperation() {
	case admission.Create:
		if ws.Spec.Cluster == "" && ws.Spec.URL == "" {
			return nil
		}
		if !system {
			return admission.NewForbidden(a, fmt.Errorf("spec.cluster and spec.URL are set by the system only"))
		}
		return p.checkAdoption(ctx, a, ws)
	case admission.Update:
		old, ok := a.GetOldObject().(*tenancyv1alpha1.Workspace)
		switch {
		case !ok:
			return nil
		case system && ws.Spec.Cluster != old.Spec.Cluster:
			return p.checkAdoption(ctx, a, ws)
		case system:
			return nil
		}
		switch {
		case a.GetSubresource() == "status" && !equality.Semantic.DeepEqual(ws.Status, old.Status):
			return admission.NewForbidden(a, fmt.Errorf("the status of a Workspace is written by the system only"))
		case ws.Spec.Cluster != old.Spec.Cluster:
			return admission.NewForbidden(a, fmt.Errorf("spec.cluster is set by the system only"))
		case ws.Spec.URL != old.Spec.URL:
			return admission.NewForbidden(a, fmt.Errorf("spec.URL is set by the system only"))
		case ws.Annotations[tenancyv1alpha1.ExperimentalWorkspaceOwnerAnnotationKey] != old.Annotations[tenancyv1alpha1.ExperimentalWorkspaceOwnerAnnotationKey]:
			return admission.NewForbidden(a, fmt.Errorf("annotation %s is set by the system only", tenancyv1alpha1.ExperimentalWorkspaceOwnerAnnotationKey))
		case ws.Annotations[tenancy.RequiredGroupsAnnotation] != old.Annotations[tenancy.RequiredGroupsAnnotation]:
			return admission.NewForbidden(a, fmt.Errorf("annotation %s is set by the system only", tenancy.RequiredGroupsAnnotation))
		}
	}
	return nil
}

// checkAdoption refuses a spec.cluster naming a logical cluster that
// exists and is not this Workspace's (another Workspace's, or one no
// Workspace owns: root, a home workspace).
func (p *Plugin) checkAdoption(ctx context.Context, a admission.Attributes, ws *tenancyv1alpha1.Workspace) error {
	if ws.Spec.Cluster == "" {
		return nil
	}
	lc, ok := p.Index.Get(ws.Spec.Cluster)
	if !ok {
		return nil
	}
	parent, _ := clusters.From(ctx)
	if !tenancy.OwnedBy(lc, parent, ws.Name, string(ws.UID)) {
		return admission.NewForbidden(a, fmt.Errorf("logical cluster %s belongs to another workspace", ws.Spec.Cluster))
	}
	return nil
}
