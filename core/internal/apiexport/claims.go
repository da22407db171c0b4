package apiexport

import (
	"fmt"
	"strings"

	"github.com/kcp-dev/logicalcluster/v3"
	apisv1alpha2 "github.com/kcp-dev/sdk/apis/apis/v1alpha2"
	"github.com/kcp-dev/sdk/apis/apis/v1alpha2/permissionclaims"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ClaimLabelPrefix starts the labels kcp puts on claimed objects:
// claimed.internal.apis.kcp.io/<export hash>: <claim hash>.
const ClaimLabelPrefix = apisv1alpha2.APIExportPermissionClaimLabelPrefix

// Claim is a permission claim a consumer's binding applies: the export
// that makes it and the objects its selector picks.
type Claim struct {
	ExportCluster, ExportName string
	apisv1alpha2.ScopedPermissionClaim

	// selector is nil for matchAll; an invalid selector picks nothing.
	selector labels.Selector
	// labelKey, labelValue: the label kcp puts on the objects it picks.
	labelKey, labelValue string
}

func newClaim(exportCluster, exportName string, sc apisv1alpha2.ScopedPermissionClaim) Claim {
	c := Claim{ExportCluster: exportCluster, ExportName: exportName, ScopedPermissionClaim: sc}
	if !sc.Selector.MatchAll {
		sel, err := metav1.LabelSelectorAsSelector(&sc.Selector.LabelSelector)
		if err != nil {
			sel = labels.Nothing()
		}
		c.selector = sel
	}
	c.labelKey, c.labelValue, _ = permissionclaims.ToLabelKeyAndValue(logicalcluster.Name(exportCluster), exportName, sc.PermissionClaim)
	return c
}

// GroupResource is the claimed resource.
func (c Claim) GroupResource() schema.GroupResource {
	return schema.GroupResource{Group: c.Group, Resource: c.Resource}
}

// Selects reports whether the claim covers an object with these labels.
func (c Claim) Selects(objLabels map[string]string) bool {
	return c.selector == nil || c.selector.Matches(labels.Set(objLabels))
}

// LabelSelector is the claim's label selector: nil for matchAll.
func (c Claim) LabelSelector() labels.Selector { return c.selector }

// Label is the label kcp puts on the objects the claim picks.
func (c Claim) Label() (string, string) { return c.labelKey, c.labelValue }

// id identifies what the claim picks, to notice changes.
func (c Claim) id() string {
	sel := "*"
	if c.selector != nil {
		sel = c.selector.String()
	}
	return fmt.Sprintf("%s|%s|%s|%s;", c.ExportCluster, c.ExportName, c.IdentityHash, sel)
}

// ClaimLabels returns an object's labels with the claim labels set as
// the claims pick it (kcp's permission claim labeler): the label of each
// claim whose selector matches, and no other claimed.internal.apis.kcp.io
// label. changed is false when they are already so.
func ClaimLabels(objLabels map[string]string, claims []Claim) (out map[string]string, changed bool) {
	want := map[string]string{}
	for _, c := range claims {
		if k, v := c.Label(); k != "" && c.Selects(objLabels) {
			want[k] = v
		}
	}
	out = make(map[string]string, len(objLabels)+len(want))
	for k, v := range objLabels {
		if strings.HasPrefix(k, ClaimLabelPrefix) {
			if want[k] != v {
				changed = true
			}
			continue
		}
		out[k] = v
	}
	for k, v := range want {
		if objLabels[k] != v {
			changed = true
		}
		out[k] = v
	}
	return out, changed
}
