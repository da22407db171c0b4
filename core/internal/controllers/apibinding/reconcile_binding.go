package apibinding

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	apisv1alpha1 "github.com/kcp-dev/sdk/apis/apis/v1alpha1"
	apisv1alpha2 "github.com/kcp-dev/sdk/apis/apis/v1alpha2"
	conditionsv1alpha1 "github.com/kcp-dev/sdk/apis/third_party/conditions/apis/conditions/v1alpha1"
	"github.com/kcp-dev/sdk/apis/third_party/conditions/util/conditions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/meshplane/meshplane/core/internal/apiexport"
)

// bindingReconciler resolves a binding's export and turns its schemas into
// the CRDs the consumer serves.
type bindingReconciler struct {
	resolve   func(path string) (string, bool)
	path      func(cluster string) string
	getExport func(ctx context.Context, cluster, name string) (*apisv1alpha2.APIExport, error)
	getSchema func(ctx context.Context, cluster, name string) (*apisv1alpha1.APIResourceSchema, error)
	conflicts conflictChecker
}

// reconcile fills in b's status and returns the CRDs to serve (nil when the
// binding cannot be served now).
func (r *bindingReconciler) reconcile(ctx context.Context, cluster string, b *apisv1alpha2.APIBinding) (time.Duration, []*apiextensionsv1.CustomResourceDefinition) {
	ref := b.Spec.Reference.Export
	exportCluster := cluster
	if ref.Path != "" {
		var ok bool
		if exportCluster, ok = r.resolve(ref.Path); !ok {
			conditions.MarkFalse(b, apisv1alpha2.APIExportValid, apisv1alpha2.APIExportNotFoundReason, conditionsv1alpha1.ConditionSeverityError,
				"workspace %q not found", ref.Path)
			return 5 * time.Second, nil
		}
	}
	export, err := r.getExport(ctx, exportCluster, ref.Name)
	if err != nil {
		conditions.MarkFalse(b, apisv1alpha2.APIExportValid, apisv1alpha2.APIExportNotFoundReason, conditionsv1alpha1.ConditionSeverityError,
			"APIExport %s not found in %s", ref.Name, r.path(exportCluster))
		return 5 * time.Second, nil
	}
	identity := export.Status.IdentityHash
	if identity == "" {
		conditions.MarkFalse(b, apisv1alpha2.APIExportValid, "IdentityPending", conditionsv1alpha1.ConditionSeverityInfo,
			"APIExport %s has no identity yet", ref.Name)
		return time.Second, nil
	}
	conditions.MarkTrue(b, apisv1alpha2.APIExportValid)
	var crds []*apiextensionsv1.CustomResourceDefinition
	var bound []apisv1alpha2.BoundAPIResource
	var skipped map[schema.GroupResource]lock
	// As kcp, the resources of a binding are served one by one: one held
	// elsewhere is skipped, a clash of names stops at that resource (those
	// before it are served).
	namesConflict := ""
	for _, res := range export.Spec.Resources {
		sch, err := r.getSchema(ctx, exportCluster, res.Schema)
		if err != nil {
			conditions.MarkFalse(b, apisv1alpha2.APIExportValid, apisv1alpha2.APIResourceSchemaInvalidReason, conditionsv1alpha1.ConditionSeverityError,
				"APIResourceSchema %s: %v", res.Schema, err)
			return 5 * time.Second, nil
		}
		def, err := apiexport.SchemaToCRD(sch, identity)
		if err != nil {
			conditions.MarkFalse(b, apisv1alpha2.APIExportValid, apisv1alpha2.APIResourceSchemaInvalidReason, conditionsv1alpha1.ConditionSeverityError, "%v", err)
			return 0, nil
		}
		gr := schema.GroupResource{Group: def.Spec.Group, Resource: def.Spec.Names.Plural}
		if l, held := r.conflicts.holder(cluster, b, gr); held {
			if skipped == nil {
				skipped = map[schema.GroupResource]lock{}
			}
			skipped[gr] = l
			continue
		}
		if conflict := r.conflicts.namesConflict(cluster, b, def); conflict != "" {
			namesConflict = conflict
			break
		}
		crds = append(crds, def)
		var storage []string
		for _, v := range sch.Spec.Versions {
			if v.Storage {
				storage = append(storage, v.Name)
			}
		}
		bound = append(bound, apisv1alpha2.BoundAPIResource{Group: sch.Spec.Group, Resource: sch.Spec.Names.Plural,
			Schema:          apisv1alpha2.BoundAPIResourceSchema{Name: sch.Name, UID: string(sch.UID), IdentityHash: identity},
			StorageVersions: storage})
	}
	b.Status.APIExportClusterName = exportCluster
	b.Status.BoundResources = bound
	b.Status.ExportPermissionClaims = nil // copies: export is the watch cache's
	for _, pc := range export.Spec.PermissionClaims {
		b.Status.ExportPermissionClaims = append(b.Status.ExportPermissionClaims, *pc.DeepCopy())
	}
	b.Status.AppliedPermissionClaims = nil
	for _, claim := range b.Spec.PermissionClaims {
		if claim.State == apisv1alpha2.ClaimAccepted && claimed(export, claim.PermissionClaim) {
			b.Status.AppliedPermissionClaims = append(b.Status.AppliedPermissionClaims, claim.ScopedPermissionClaim)
		}
	}
	for _, t := range []conditionsv1alpha1.ConditionType{apisv1alpha2.PermissionClaimsValid, apisv1alpha2.PermissionClaimsApplied} {
		conditions.MarkTrue(b, t)
	}
	var requeue time.Duration
	switch {
	case namesConflict != "":
		markConflict(b, "Unable to bind APIs: %v", namesConflict)
		requeue = 10 * time.Second
	case len(skipped) > 0:
		markConflict(b, "Unable to bind APIs because they are bound by other APIBindings or CRDs: %v", skipped)
		requeue = 10 * time.Second
	default:
		conditions.MarkTrue(b, apisv1alpha2.InitialBindingCompleted)
		conditions.MarkTrue(b, apisv1alpha2.BindingUpToDate)
		b.Status.Phase = apisv1alpha2.APIBindingPhaseBound
	}
	if invalid := unexpectedClaims(export, b); len(invalid) > 0 {
		shown := invalid
		if len(shown) > 10 {
			shown = shown[:10]
		}
		conditions.MarkFalse(b, apisv1alpha2.PermissionClaimsValid, apisv1alpha2.InvalidPermissionClaimsReason, conditionsv1alpha1.ConditionSeverityError,
			"%d unexpected and/or invalid permission claims (showing first %d): %s", len(invalid), len(shown), errorList(shown))
	}
	// Ready follows InitialBindingCompleted, as kcp's summary.
	if conditions.IsTrue(b, apisv1alpha2.InitialBindingCompleted) {
		conditions.MarkTrue(b, conditionsv1alpha1.ReadyCondition)
	} else {
		c := conditions.Get(b, apisv1alpha2.InitialBindingCompleted)
		conditions.MarkFalse(b, conditionsv1alpha1.ReadyCondition, c.Reason, c.Severity, "%s", c.Message)
	}
	if crds == nil {
		crds = []*apiextensionsv1.CustomResourceDefinition{}
	}
	return requeue, crds
}

// markConflict reports a naming conflict as kcp does: BindingUpToDate
// False, and InitialBindingCompleted False unless the binding was bound
// before.
func markConflict(b *apisv1alpha2.APIBinding, format string, args ...any) {
	conditions.MarkFalse(b, apisv1alpha2.BindingUpToDate, apisv1alpha2.NamingConflictsReason, conditionsv1alpha1.ConditionSeverityError, format, args...)
	if !conditions.IsTrue(b, apisv1alpha2.InitialBindingCompleted) {
		conditions.MarkFalse(b, apisv1alpha2.InitialBindingCompleted, apisv1alpha2.NamingConflictsReason, conditionsv1alpha1.ConditionSeverityError, format, args...)
	}
}

// claimed reports whether the export makes the claim a binding accepts.
// unexpectedClaims describes, as kcp does, the accepted claims the export
// does not make: another resource, or an identity hash that is not the one
// the export claims (for instance one no export has).
func unexpectedClaims(export *apisv1alpha2.APIExport, b *apisv1alpha2.APIBinding) []string {
	var out []string
	for _, c := range b.Spec.PermissionClaims {
		if c.State == apisv1alpha2.ClaimAccepted && !claimed(export, c.PermissionClaim) {
			out = append(out, fmt.Sprintf("unexpected/invalid claim for %s.%s (identity %q)", c.Resource, c.Group, c.IdentityHash))
		}
	}
	slices.Sort(out)
	return out
}

// errorList renders messages as an aggregate error does: one as is, more
// in brackets.
func errorList(msgs []string) string {
	if len(msgs) == 1 {
		return msgs[0]
	}
	return "[" + strings.Join(msgs, ", ") + "]"
}

func claimed(export *apisv1alpha2.APIExport, claim apisv1alpha2.PermissionClaim) bool {
	return slices.ContainsFunc(export.Spec.PermissionClaims, func(c apisv1alpha2.PermissionClaim) bool { return c.EqualGRI(claim) })
}
