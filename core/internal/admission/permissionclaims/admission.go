// Package permissionclaims labels objects that accepted permission claims
// pick, as kcp's admission does: on every create and update in a logical
// cluster, an object of a claimed resource gets the label
// claimed.internal.apis.kcp.io/<export hash>: <claim hash> of each claim
// whose selector matches it, and loses the claim labels of claims that no
// longer pick it. The permissionclaimlabel controller labels the objects
// that exist when a claim changes.
package permissionclaims

import (
	"context"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apiserver/pkg/admission"

	"github.com/meshplane/meshplane/core/internal/apiexport"
	"github.com/meshplane/meshplane/core/internal/clusters"
)

// Plugin is the admission plugin.
type Plugin struct {
	*admission.Handler
	consumers *apiexport.Consumers
}

var _ admission.MutationInterface = &Plugin{}

// New returns the plugin.
func New(consumers *apiexport.Consumers) *Plugin {
	return &Plugin{Handler: admission.NewHandler(admission.Create, admission.Update), consumers: consumers}
}

// Admit implements admission.MutationInterface.
func (p *Plugin) Admit(ctx context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	if a.GetSubresource() != "" || a.GetObject() == nil {
		return nil
	}
	cluster, ok := clusters.From(ctx)
	if !ok || cluster == clusters.Wildcard {
		return nil
	}
	obj, err := meta.Accessor(a.GetObject())
	if err != nil {
		return nil // no metadata
	}
	claims := p.consumers.ClaimsOn(cluster, a.GetResource().GroupResource())
	if len(claims) == 0 && !hasClaimLabel(obj.GetLabels()) {
		return nil
	}
	if out, changed := apiexport.ClaimLabels(obj.GetLabels(), claims); changed {
		obj.SetLabels(out)
	}
	return nil
}

func hasClaimLabel(labels map[string]string) bool {
	for k := range labels {
		if len(k) > len(apiexport.ClaimLabelPrefix) && k[:len(apiexport.ClaimLabelPrefix)] == apiexport.ClaimLabelPrefix {
			return true
		}
	}
	return false
}
