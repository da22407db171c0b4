// Package crdnooverlap refuses, as kcp's CRDNoOverlappingGVR admission
// does, a CustomResourceDefinition whose group and resource an APIBinding
// already serves in the workspace.
package crdnooverlap

import (
	"context"
	"fmt"
	"sort"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiserver/pkg/admission"

	"github.com/meshplane/meshplane/core/internal/clusters"
)

// BoundIn returns the resources each binding makes a cluster serve.
type BoundIn func(cluster string) map[string][]*apiextensionsv1.CustomResourceDefinition

// Plugin is the admission plugin.
type Plugin struct {
	*admission.Handler
	Bound BoundIn
}

var _ admission.ValidationInterface = &Plugin{}

// New returns the plugin.
func New(bound BoundIn) *Plugin {
	return &Plugin{Handler: admission.NewHandler(admission.Create), Bound: bound}
}

// Validate refuses a CRD of a bound resource with kcp's message.
func (p *Plugin) Validate(ctx context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	if a.GetResource().GroupResource() != apiextensionsv1.Resource("customresourcedefinitions") || a.GetSubresource() != "" {
		return nil
	}
	var group, plural string
	switch crd := a.GetObject().(type) {
	case *apiextensions.CustomResourceDefinition:
		group, plural = crd.Spec.Group, crd.Spec.Names.Plural
	case *apiextensionsv1.CustomResourceDefinition:
		group, plural = crd.Spec.Group, crd.Spec.Names.Plural
	default:
		return nil
	}
	cluster, _ := clusters.From(ctx)
	bound := p.Bound(cluster)
	names := make([]string, 0, len(bound))
	for b := range bound {
		names = append(names, b)
	}
	sort.Strings(names)
	for _, b := range names {
		for _, crd := range bound[b] {
			if crd.Spec.Group == group && crd.Spec.Names.Plural == plural {
				return admission.NewForbidden(a, fmt.Errorf("cannot create because resource is bound by APIBinding %q", b))
			}
		}
	}
	return nil
}
