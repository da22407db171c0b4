package mounts

import (
	"context"
	"fmt"

	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apiserver/pkg/admission"
)

// Disabled is the admission plugin used while the WorkspaceMounts gate is
// off: it refuses Workspaces with a mount, which would otherwise wait
// forever for a logical cluster that is never made.
type Disabled struct{ *admission.Handler }

// NewDisabled returns the plugin.
func NewDisabled() *Disabled { return &Disabled{Handler: admission.NewHandler(admission.Create)} }

var _ admission.ValidationInterface = &Disabled{}

// Validate implements admission.ValidationInterface.
func (d *Disabled) Validate(_ context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	if a.GetResource().GroupResource() != tenancyv1alpha1.Resource("workspaces") || a.GetSubresource() != "" {
		return nil
	}
	if ws, ok := a.GetObject().(*tenancyv1alpha1.Workspace); ok && ws.Spec.Mount != nil {
		return apierrors.NewForbidden(tenancyv1alpha1.Resource("workspaces"), ws.Name,
			fmt.Errorf("workspace mounts are turned off on this server (feature gate %s=false)", Gate))
	}
	return nil
}
