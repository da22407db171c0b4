// Package apibinding binds APIExports into consumer workspaces.
//
// Reconcile steps: resolve the export (spec.reference.export, path
// relative to nothing: empty means the binding's own workspace); wait for
// its identity; turn each exported APIResourceSchema into the CRD the
// consumer serves (stored under the export's identity); refuse names that
// clash with the consumer's CRDs or other bindings; then serve them and
// report Bound with the bound resources.
package apibinding

import (
	"context"
	"fmt"
	"strings"
	"time"

	apisv1alpha1 "github.com/kcp-dev/sdk/apis/apis/v1alpha1"
	apisv1alpha2 "github.com/kcp-dev/sdk/apis/apis/v1alpha2"
	conditionsv1alpha1 "github.com/kcp-dev/sdk/apis/third_party/conditions/apis/conditions/v1alpha1"
	"github.com/kcp-dev/sdk/apis/third_party/conditions/util/conditions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/cache"

	"github.com/meshplane/meshplane/core/pkg/apiexport"
	"github.com/meshplane/meshplane/core/pkg/clusters"
	"github.com/meshplane/meshplane/core/pkg/controllers/runner"
	"github.com/meshplane/meshplane/core/pkg/crd"
	"github.com/meshplane/meshplane/core/pkg/registry/builtin"
	"github.com/meshplane/meshplane/core/pkg/registry/local"
	"github.com/meshplane/meshplane/core/pkg/tenancy"
)

// Controller reconciles APIBindings.
type Controller struct {
	Bindings  local.Client[*apisv1alpha2.APIBinding]
	Exports   local.Client[*apisv1alpha2.APIExport]
	Schemas   local.Client[*apisv1alpha1.APIResourceSchema]
	Index     *tenancy.Index
	CRDs      *crd.Index
	Consumers *apiexport.Consumers
	// DeleteAll deletes every object of a bound resource in a cluster.
	DeleteAll func(ctx context.Context, cluster string, def *apiextensionsv1.CustomResourceDefinition) error

	runner *runner.Runner
}

// Run works until ctx is done.
func (c *Controller) Run(ctx context.Context, bindingInformer, exportInformer cache.SharedIndexInformer) {
	c.runner = runner.New("apibinding", 4, c.reconcile)
	keyOf := func(o any) (string, *apisv1alpha2.APIBinding) {
		if t, ok := o.(cache.DeletedFinalStateUnknown); ok {
			o = t.Obj
		}
		b, ok := o.(*apisv1alpha2.APIBinding)
		if !ok {
			return "", nil
		}
		return b.Annotations[clusters.Annotation] + "|" + b.Name, b
	}
	_, _ = bindingInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { k, _ := keyOf(o); c.runner.Add(k) },
		UpdateFunc: func(_, o any) { k, _ := keyOf(o); c.runner.Add(k) },
		DeleteFunc: func(o any) {
			if _, b := keyOf(o); b != nil {
				cluster := b.Annotations[clusters.Annotation]
				c.CRDs.RemoveBound(cluster, b.Name)
				c.Consumers.Set(cluster, b.Name, "", "")
			}
		},
	})
	// A change of an export (identity, resources) concerns its bindings.
	_, _ = exportInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(_, o any) {
			e, ok := o.(*apisv1alpha2.APIExport)
			if !ok {
				return
			}
			for consumer, binding := range c.Consumers.Of(e.Annotations[clusters.Annotation], e.Name) {
				c.runner.Add(consumer + "|" + binding)
			}
			for _, o := range bindingInformer.GetStore().List() {
				if b := o.(*apisv1alpha2.APIBinding); b.Status.Phase != apisv1alpha2.APIBindingPhaseBound {
					k, _ := keyOf(b)
					c.runner.Add(k)
				}
			}
		},
	})
	c.runner.Run(ctx)
}

func (c *Controller) reconcile(ctx context.Context, key string) (time.Duration, error) {
	cluster, name, _ := strings.Cut(key, "|")
	b, err := c.Bindings.Get(ctx, cluster, "", name)
	if apierrors.IsNotFound(err) {
		c.CRDs.RemoveBound(cluster, name)
		c.Consumers.Set(cluster, name, "", "")
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	if b.DeletionTimestamp != nil {
		return 0, c.unbind(ctx, cluster, b)
	}
	want := b.DeepCopy()
	if want.Status.Phase == "" {
		want.Status.Phase = apisv1alpha2.APIBindingPhaseBinding
	}
	requeue, crds := c.bind(ctx, cluster, want)
	if crds != nil {
		c.CRDs.SetBound(cluster, name, crds)
		var accepted []string
		for _, claim := range want.Status.AppliedPermissionClaims {
			accepted = append(accepted, claim.Group+"/"+claim.Resource)
		}
		c.Consumers.SetClaims(cluster, name, accepted)
		c.Consumers.Set(cluster, name, want.Status.APIExportClusterName, want.Spec.Reference.Export.Name)
	}
	if !equality.Semantic.DeepEqual(b.Status, want.Status) {
		if _, err := c.Bindings.UpdateStatus(ctx, cluster, "", name, want); err != nil {
			return 0, err
		}
	}
	return requeue, nil
}

// unbind deletes the objects of the binding's resources in the consumer,
// stops serving them and releases the binding.
func (c *Controller) unbind(ctx context.Context, cluster string, b *apisv1alpha2.APIBinding) error {
	for _, def := range c.CRDs.Bound(cluster, b.Name) {
		if err := c.DeleteAll(ctx, cluster, def); err != nil {
			return fmt.Errorf("deleting %s: %w", def.Name, err)
		}
	}
	c.CRDs.RemoveBound(cluster, b.Name)
	c.Consumers.Set(cluster, b.Name, "", "")
	b = b.DeepCopy()
	var keep []string
	for _, f := range b.Finalizers {
		if f != builtin.BindingFinalizer {
			keep = append(keep, f)
		}
	}
	if len(keep) == len(b.Finalizers) {
		return nil
	}
	b.Finalizers = keep
	_, err := c.Bindings.Update(ctx, cluster, "", b.Name, b)
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// bind fills in b's status and returns the CRDs to serve (nil when the
// binding cannot be served now).
func (c *Controller) bind(ctx context.Context, cluster string, b *apisv1alpha2.APIBinding) (time.Duration, []*apiextensionsv1.CustomResourceDefinition) {
	ref := b.Spec.Reference.Export
	exportCluster := cluster
	if ref.Path != "" {
		var ok bool
		if exportCluster, ok = c.Index.Resolve(ref.Path); !ok {
			conditions.MarkFalse(b, apisv1alpha2.APIExportValid, apisv1alpha2.APIExportNotFoundReason, conditionsv1alpha1.ConditionSeverityError,
				"workspace %q not found", ref.Path)
			return 5 * time.Second, nil
		}
	}
	export, err := c.Exports.Get(ctx, exportCluster, "", ref.Name)
	if err != nil {
		conditions.MarkFalse(b, apisv1alpha2.APIExportValid, apisv1alpha2.APIExportNotFoundReason, conditionsv1alpha1.ConditionSeverityError,
			"APIExport %s not found in %s", ref.Name, c.Index.Path(exportCluster))
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
	for _, r := range export.Spec.Resources {
		schema, err := c.Schemas.Get(ctx, exportCluster, "", r.Schema)
		if err != nil {
			conditions.MarkFalse(b, apisv1alpha2.APIExportValid, apisv1alpha2.APIResourceSchemaInvalidReason, conditionsv1alpha1.ConditionSeverityError,
				"APIResourceSchema %s: %v", r.Schema, err)
			return 5 * time.Second, nil
		}
		def, err := apiexport.SchemaToCRD(schema, identity, cluster)
		if err != nil {
			conditions.MarkFalse(b, apisv1alpha2.APIExportValid, apisv1alpha2.APIResourceSchemaInvalidReason, conditionsv1alpha1.ConditionSeverityError, "%v", err)
			return 0, nil
		}
		if conflict := c.conflict(cluster, b.Name, def); conflict != "" {
			conditions.MarkFalse(b, apisv1alpha2.BindingUpToDate, apisv1alpha2.NamingConflictsReason, conditionsv1alpha1.ConditionSeverityError, "%s", conflict)
			conditions.MarkFalse(b, apisv1alpha2.InitialBindingCompleted, apisv1alpha2.NamingConflictsReason, conditionsv1alpha1.ConditionSeverityError, "%s", conflict)
			return 10 * time.Second, nil
		}
		crds = append(crds, def)
		var storage []string
		for _, v := range schema.Spec.Versions {
			if v.Storage {
				storage = append(storage, v.Name)
			}
		}
		bound = append(bound, apisv1alpha2.BoundAPIResource{Group: schema.Spec.Group, Resource: schema.Spec.Names.Plural,
			Schema:          apisv1alpha2.BoundAPIResourceSchema{Name: schema.Name, UID: string(schema.UID), IdentityHash: identity},
			StorageVersions: storage})
	}
	b.Status.APIExportClusterName = exportCluster
	b.Status.BoundResources = bound
	b.Status.Phase = apisv1alpha2.APIBindingPhaseBound
	b.Status.ExportPermissionClaims = export.Spec.PermissionClaims
	b.Status.AppliedPermissionClaims = nil
	for _, claim := range b.Spec.PermissionClaims {
		if claim.State == apisv1alpha2.ClaimAccepted && claimed(export, claim.PermissionClaim) {
			b.Status.AppliedPermissionClaims = append(b.Status.AppliedPermissionClaims, claim.ScopedPermissionClaim)
		}
	}
	for _, t := range []conditionsv1alpha1.ConditionType{apisv1alpha2.InitialBindingCompleted, apisv1alpha2.BindingUpToDate,
		apisv1alpha2.PermissionClaimsValid, apisv1alpha2.PermissionClaimsApplied} {
		conditions.MarkTrue(b, t)
	}
	conditions.MarkTrue(b, conditionsv1alpha1.ReadyCondition)
	if crds == nil {
		crds = []*apiextensionsv1.CustomResourceDefinition{}
	}
	return 0, crds
}

// conflict describes why def cannot be served in cluster, or returns "".
func (c *Controller) conflict(cluster, binding string, def *apiextensionsv1.CustomResourceDefinition) string {
	for _, existing := range c.CRDs.List(cluster) {
		if existing.Spec.Group != def.Spec.Group || existing.Spec.Names.Plural != def.Spec.Names.Plural {
			continue
		}
		id := existing.Annotations[crd.IdentityAnnotation]
		switch {
		case id == "":
			return fmt.Sprintf("a CustomResourceDefinition %s already exists in this workspace", existing.Name)
		case id != def.Annotations[crd.IdentityAnnotation]:
			return fmt.Sprintf("%s is already bound from another APIExport", existing.Name)
		}
	}
	return ""
}

// claimed reports whether the export makes the claim a binding accepts.
func claimed(export *apisv1alpha2.APIExport, claim apisv1alpha2.PermissionClaim) bool {
	for _, c := range export.Spec.PermissionClaims {
		if c.EqualGRI(claim) {
			return true
		}
	}
	return false
}
