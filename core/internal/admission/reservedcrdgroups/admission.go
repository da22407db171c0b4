// Package reservedcrdgroups refuses CustomResourceDefinitions in the API
// groups of kcp. kcp refuses every group ending in apis.kcp.io; the other
// kcp groups (tenancy.kcp.io, core.kcp.io, topology.kcp.io, cache.kcp.io)
// are refused here too, with their subdomains: the server serves them
// itself, so a CRD there would never be served, yet it would show in
// discovery next to the real kinds (kcp serves them from system CRDs and
// bindings instead). Other groups of the kcp.io domain (contrib.kcp.io,
// which kcp's own mount fixtures use) stay open, as in kcp.
package reservedcrdgroups

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiserver/pkg/admission"
)

// kcpGroups are kcp's API groups besides apis.kcp.io.
var kcpGroups = []string{"tenancy.kcp.io", "core.kcp.io", "topology.kcp.io", "cache.kcp.io"}

// Reserved reports whether a CRD may not define group.
func Reserved(group string) bool {
	if strings.HasSuffix(group, "apis.kcp.io") { // kcp's rule, verbatim
		return true
	}
	for _, g := range kcpGroups {
		if group == g || strings.HasSuffix(group, "."+g) {
			return true
		}
	}
	return false
}

// Plugin is the admission plugin.
type Plugin struct{ *admission.Handler }

var _ admission.ValidationInterface = &Plugin{}

// New returns the plugin.
func New() *Plugin {
	return &Plugin{Handler: admission.NewHandler(admission.Create, admission.Update)}
}

// Validate refuses a CRD in a reserved group with kcp's message.
func (p *Plugin) Validate(_ context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	if a.GetResource().GroupResource() != apiextensionsv1.Resource("customresourcedefinitions") || a.GetSubresource() != "" {
		return nil
	}
	var group string
	switch crd := a.GetObject().(type) {
	case *apiextensions.CustomResourceDefinition:
		group = crd.Spec.Group
	case *apiextensionsv1.CustomResourceDefinition:
		group = crd.Spec.Group
	default:
		return nil
	}
	if Reserved(group) {
		return admission.NewForbidden(a, fmt.Errorf("%s is a reserved group", group))
	}
	return nil
}
