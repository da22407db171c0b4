package apiexportvw

import (
	"context"
	"fmt"

	apisv1alpha2 "github.com/kcp-dev/sdk/apis/apis/v1alpha2"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apiserver/pkg/admission"

	"github.com/meshplane/meshplane/core/internal/clusters"
)

// Admission applies, as kcp's APIExport virtual workspace does, the
// selector of an accepted permission claim to what a provider writes
// through the virtual workspace: a create or update of a claimed resource
// gets the claim's matchLabels (a different value is refused), and the
// object must then match the selector.
type Admission struct {
	*admission.Handler
	Exports Exports
}

var (
	_ admission.MutationInterface   = &Admission{}
	_ admission.ValidationInterface = &Admission{}
)

// NewAdmission returns the plugin.
func NewAdmission(exports Exports) *Admission {
	return &Admission{Handler: admission.NewHandler(admission.Create, admission.Update), Exports: exports}
}

// claimOf returns the claim a request writes through, if it is a write of
// a claimed resource in one consumer through the virtual workspace.
func (p *Admission) claimOf(ctx context.Context, a admission.Attributes) (claimed bool, selects func(map[string]string) bool, matchLabels map[string]string) {
	t, ok := From(ctx)
	if !ok || a.GetSubresource() != "" || a.GetObject() == nil {
		return false, nil, nil
	}
	cluster, ok := clusters.From(ctx)
	gr := a.GetResource().GroupResource()
	if !ok || cluster == clusters.Wildcard || (gr.Group == apisv1alpha2.SchemeGroupVersion.Group && gr.Resource == "apibindings") ||
		exportsResource(ctx, p.Exports, t, gr.Group, gr.Resource) {
		return false, nil, nil
	}
	claim, ok := p.Exports.Claim(cluster, t.Cluster, t.Name, gr.Group, gr.Resource)
	if !ok || claim.Selector.MatchAll {
		return false, nil, nil
	}
	return true, claim.Selects, claim.Selector.MatchLabels
}

// Admit implements admission.MutationInterface.
func (p *Admission) Admit(ctx context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	claimed, _, want := p.claimOf(ctx, a)
	if !claimed || len(want) == 0 {
		return nil
	}
	obj, err := meta.Accessor(a.GetObject())
	if err != nil {
		return nil
	}
	labels := obj.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	for k, v := range want {
		if cur, ok := labels[k]; ok && cur != v {
			return admission.NewForbidden(a, fmt.Errorf("protected label %s must have value %s", k, v))
		}
		labels[k] = v
	}
	obj.SetLabels(labels)
	return nil
}

// Validate implements admission.ValidationInterface.
func (p *Admission) Validate(ctx context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	claimed, selects, _ := p.claimOf(ctx, a)
	if !claimed {
		return nil
	}
	obj, err := meta.Accessor(a.GetObject())
	if err != nil {
		return nil
	}
	if !selects(obj.GetLabels()) {
		return admission.NewForbidden(a, fmt.Errorf("object does not match required labels"))
	}
	return nil
}
