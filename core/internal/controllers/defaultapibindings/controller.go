// Package defaultapibindings is the system:apibindings initializer: when a
// workspace whose type (or a type it extends) lists defaultAPIBindings
// initializes, it creates those APIBindings, waits until they are Bound,
// then removes itself from the cluster's initializers. As kcp's apibinder
// initializer does, each binding accepts every permission claim of its
// export, with the claim's defaultSelector (all objects without one), so
// the provider can work in the new workspace; the initializer waits for
// the accepted claims to be applied too.
package defaultapibindings

import (
	"context"
	"fmt"
	"strings"
	"time"

	apisv1alpha2 "github.com/kcp-dev/sdk/apis/apis/v1alpha2"
	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
	"github.com/kcp-dev/sdk/apis/third_party/conditions/util/conditions"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/meshplane/meshplane/core/internal/controllers/initializer"
	"github.com/meshplane/meshplane/core/internal/reconciler/client"
	"github.com/meshplane/meshplane/core/internal/tenancy"
)

const name = tenancyv1alpha1.WorkspaceAPIBindingsInitializer

// Controller creates default APIBindings.
type Controller struct {
	Clients  tenancy.Clients
	Index    *tenancy.Index
	Types    *tenancy.Types
	Bindings client.Client[*apisv1alpha2.APIBinding]
	// Exports reads the exports the bindings point at, for their claims.
	Exports client.Reader[*apisv1alpha2.APIExport]
	// Resolve resolves the exports' workspace paths (Index.Resolve when
	// nil; across shards, theirs too).
	Resolve func(path string) (string, bool)
}

// New returns the controller.
func New(clients tenancy.Clients, index *tenancy.Index, types *tenancy.Types, bindings client.Client[*apisv1alpha2.APIBinding],
	exports client.Reader[*apisv1alpha2.APIExport]) *Controller {
	return &Controller{Clients: clients, Index: index, Types: types, Bindings: bindings, Exports: exports}
}

// Run works until ctx is done.
func (c *Controller) Run(ctx context.Context) {
	(&initializer.Initializer{Name: name, LogicalClusters: c.Clients.LogicalClusters, Index: c.Index, Step: c.step}).Run(ctx, 2)
}

func (c *Controller) step(ctx context.Context, cluster string, lc *corev1alpha1.LogicalCluster) (bool, time.Duration, error) {
	typeID := lc.Annotations[tenancy.TypeAnnotation]
	i := strings.LastIndex(typeID, ":")
	t, err := c.Types.Resolve(ctx, tenancyv1alpha1.WorkspaceTypeReference{Path: typeID[:i], Name: tenancyv1alpha1.WorkspaceTypeName(typeID[i+1:])}, "")
	if err != nil {
		return false, 0, err
	}
	aliases, err := c.Types.Aliases(ctx, t)
	if err != nil {
		return false, 0, err
	}
	pending := false
	for _, a := range aliases {
		for _, ref := range a.Spec.DefaultAPIBindings {
			path := ref.Path
			if path == "" {
				path = a.Path
			}
			b, err := client.CachedOrLive(ctx, c.Bindings, cluster, "", ref.Export)
			if apierrors.IsNotFound(err) {
				var claims []apisv1alpha2.AcceptablePermissionClaim
				claims, err = c.claims(ctx, path, ref.Export)
				if err != nil {
					return false, 0, err
				}
				b, err = c.Bindings.Create(ctx, cluster, "", &apisv1alpha2.APIBinding{
					ObjectMeta: metav1.ObjectMeta{Name: ref.Export},
					Spec: apisv1alpha2.APIBindingSpec{
						Reference:        apisv1alpha2.BindingReference{Export: &apisv1alpha2.ExportBindingReference{Path: path, Name: ref.Export}},
						PermissionClaims: claims,
					},
				})
			}
			if err != nil {
				return false, 0, err
			}
			pending = pending || b.Status.Phase != apisv1alpha2.APIBindingPhaseBound ||
				(hasAccepted(b) && !conditions.IsTrue(b, apisv1alpha2.PermissionClaimsApplied))
		}
	}
	if pending {
		return false, 500 * time.Millisecond, nil
	}
	return true, 0, nil
}

// claims returns every permission claim of the export at path, accepted
// with its default selector.
func (c *Controller) claims(ctx context.Context, path, name string) ([]apisv1alpha2.AcceptablePermissionClaim, error) {
	if c.Exports == nil {
		return nil, nil
	}
	resolve := c.Index.Resolve
	if c.Resolve != nil {
		resolve = c.Resolve
	}
	cluster, ok := resolve(path)
	if !ok {
		return nil, fmt.Errorf("workspace %s of APIExport %s not found", path, name)
	}
	export, err := c.Exports.Get(ctx, cluster, "", name)
	if err != nil {
		return nil, fmt.Errorf("APIExport %s:%s: %w", path, name, err)
	}
	return AcceptAll(export.Spec.PermissionClaims), nil
}

// AcceptAll accepts every claim, with the claim's defaultSelector, for
// all objects without one (kcp's apibinder initializer).
func AcceptAll(claims []apisv1alpha2.PermissionClaim) []apisv1alpha2.AcceptablePermissionClaim {
	var out []apisv1alpha2.AcceptablePermissionClaim
	for _, pc := range claims {
		selector := apisv1alpha2.PermissionClaimSelector{MatchAll: true}
		if pc.DefaultSelector != nil {
			selector = *pc.DefaultSelector.DeepCopy()
		}
		out = append(out, apisv1alpha2.AcceptablePermissionClaim{
			ScopedPermissionClaim: apisv1alpha2.ScopedPermissionClaim{
				PermissionClaim: *pc.DeepCopy(),
				Selector:        selector,
			},
			State: apisv1alpha2.ClaimAccepted,
		})
	}
	return out
}

func hasAccepted(b *apisv1alpha2.APIBinding) bool {
	for _, c := range b.Spec.PermissionClaims {
		if c.State == apisv1alpha2.ClaimAccepted {
			return true
		}
	}
	return false
}
