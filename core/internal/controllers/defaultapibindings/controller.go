// Package defaultapibindings is the system:apibindings initializer: when a
// workspace whose type (or a type it extends) lists defaultAPIBindings
// initializes, it creates those APIBindings, waits until they are Bound,
// then removes itself from the cluster's initializers. As kcp's apibinder
// initializer does, each binding accepts every permission claim of its
// export, with the claim's defaultSelector (all objects without one), so
// the provider can work in the new workspace; the initializer waits for
// the accepted claims to be applied too. Bindings get kcp's names
// (BindingName); a binding of the export the workspace has already is
// kept.
package defaultapibindings

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	kcpcrypto "github.com/kcp-dev/apimachinery/v2/pkg/util/crypto"
	apisv1alpha2 "github.com/kcp-dev/sdk/apis/apis/v1alpha2"
	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
	"github.com/kcp-dev/sdk/apis/third_party/conditions/util/conditions"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/meshplane/meshplane/core/internal/clusters"
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
			b, err := c.ensure(ctx, cluster, a, ref)
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

// ensure returns the default binding of ref in cluster, creating it with
// kcp's name (BindingName) unless the export is bound already: a binding
// an older server named after the export is the default binding.
func (c *Controller) ensure(ctx context.Context, cluster string, a tenancy.Type, ref tenancyv1alpha1.APIExportReference) (*apisv1alpha2.APIBinding, error) {
	path, hashedPath := ref.Path, ref.Path
	if path == "" {
		// kcp hashes the type's logical cluster in the name.
		path, hashedPath = a.Path, a.Annotations[clusters.Annotation]
	}
	name := BindingName(cluster, hashedPath, ref.Export)
	b, err := client.CachedOrLive(ctx, c.Bindings, cluster, "", name)
	if !apierrors.IsNotFound(err) {
		return b, err
	}
	if b, found, err := c.bindingOf(ctx, cluster, ref.Export, path, hashedPath); err != nil || found {
		return b, err
	}
	claims, err := c.claims(ctx, path, ref.Export)
	if err != nil {
		return nil, err
	}
	return c.Bindings.Create(ctx, cluster, "", &apisv1alpha2.APIBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: apisv1alpha2.APIBindingSpec{
			Reference:        apisv1alpha2.BindingReference{Export: &apisv1alpha2.ExportBindingReference{Path: path, Name: ref.Export}},
			PermissionClaims: claims,
		},
	})
}

// maxExportNamePrefix is how much of the export's name a binding's name
// keeps: room for "-" and the hash in a DNS subdomain (253).
const maxExportNamePrefix = validation.DNS1123SubdomainMaxLength - 1 - 5

// BindingName is kcp's name of a default APIBinding: the export's name
// (cut to fit), "-" and five characters of a hash of the workspace's
// logical cluster, the export's path (the type's logical cluster when the
// type gives none) and the export's name.
func BindingName(cluster, exportPath, exportName string) string {
	prefix := exportName
	if len(prefix) > maxExportNamePrefix {
		prefix = prefix[:maxExportNamePrefix]
	}
	hash := kcpcrypto.Base62Sha224.String(cluster + "|" + exportPath + "|" + exportName)
	return prefix + "-" + strings.ToLower(hash[:5])
}

// bindingOf finds a binding in cluster of the export at one of paths.
func (c *Controller) bindingOf(ctx context.Context, cluster, export string, paths ...string) (*apisv1alpha2.APIBinding, bool, error) {
	obj, err := c.Bindings.List(ctx, cluster, "", &metainternalversion.ListOptions{})
	if err != nil {
		return nil, false, err
	}
	list, ok := obj.(*apisv1alpha2.APIBindingList)
	if !ok {
		return nil, false, fmt.Errorf("unexpected list %T", obj)
	}
	for i := range list.Items {
		ref := list.Items[i].Spec.Reference.Export
		if ref != nil && ref.Name == export && slices.Contains(paths, ref.Path) {
			return &list.Items[i], true, nil
		}
	}
	return nil, false, nil
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
