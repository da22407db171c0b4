// Package logicalcluster guards a workspace's LogicalCluster (its
// lifecycle state) against its users, as kcp's admission does: only system
// identities (authorization/privileged: the system's own credentials, not
// impersonated) create or delete it (a user deletes only one the system
// marked spec.directlyDeletable), and updates by anyone else keep the
// lifecycle rules: the spec (owner, initializers, terminators,
// directlyDeletable) and status.URL are the system's, the phase never
// goes back, status.initializers only shrinks while initializing (and is
// empty when initialization ends, unchanged after it), status.terminators
// only shrinks while the cluster is deleted.
package logicalcluster

import (
	"context"
	"fmt"
	"slices"

	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/admission"

	"github.com/meshplane/meshplane/core/internal/authorization/privileged"
	"github.com/meshplane/meshplane/core/internal/tenancy"
	"github.com/meshplane/meshplane/core/internal/virtual/lifecycle"
)

// phaseOrder orders the phases a LogicalCluster goes through.
var phaseOrder = map[corev1alpha1.LogicalClusterPhaseType]int{
	corev1alpha1.LogicalClusterPhaseScheduling:   1,
	corev1alpha1.LogicalClusterPhaseInitializing: 2,
	corev1alpha1.LogicalClusterPhaseReady:        3,
}

// Plugin is the admission plugin.
type Plugin struct {
	*admission.Handler
}

var (
	_ admission.ValidationInterface = &Plugin{}
	_ admission.MutationInterface   = &Plugin{}
)

// New returns the plugin.
func New() *Plugin {
	return &Plugin{Handler: admission.NewHandler(admission.Create, admission.Update, admission.Delete)}
}

// Admit implements admission.MutationInterface. A status update of an
// initializing cluster (an initializer removing itself through the
// initializing virtual workspace) gets the lifecycle labels of the
// initializers left, and the cluster becomes Ready in the write that
// removes the last one: the logicalcluster controller then has nothing to
// write (it wrote both in a second write after each removal). The
// reservedmetadata admission accepts lifecycle labels in step with the
// initializers.
func (p *Plugin) Admit(_ context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	if a.GetOperation() != admission.Update || a.GetSubresource() != "status" ||
		a.GetResource().GroupResource() != corev1alpha1.Resource("logicalclusters") {
		return nil
	}
	this, ok := a.GetObject().(*corev1alpha1.LogicalCluster)
	if !ok || this.DeletionTimestamp != nil || this.Status.Phase != corev1alpha1.LogicalClusterPhaseInitializing {
		return nil
	}
	tenancy.SettleInitializers(this)
	return nil
}

// Validate implements admission.ValidationInterface.
func (p *Plugin) Validate(ctx context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	if a.GetResource().GroupResource() != corev1alpha1.Resource("logicalclusters") {
		return nil
	}
	if a.GetOperation() == admission.Update && a.GetSubresource() == "status" {
		// Through a lifecycle virtual workspace, for everybody: an
		// initializer or terminator releases only itself.
		this, ok1 := a.GetObject().(*corev1alpha1.LogicalCluster)
		old, ok2 := a.GetOldObject().(*corev1alpha1.LogicalCluster)
		if ok1 && ok2 {
			if err := lifecycle.ValidateRelease(ctx, old, this); err != nil {
				return err
			}
		}
	}
	if privileged.System(ctx, a.GetUserInfo()) {
		return nil
	}
	switch a.GetOperation() {
	case admission.Create:
		return admission.NewForbidden(a, fmt.Errorf("LogicalCluster cannot be created"))
	case admission.Delete:
		old, ok := a.GetOldObject().(*corev1alpha1.LogicalCluster)
		if !ok || !old.Spec.DirectlyDeletable {
			return admission.NewForbidden(a, fmt.Errorf("LogicalCluster cannot be deleted"))
		}
		return nil
	case admission.Update:
		this, ok1 := a.GetObject().(*corev1alpha1.LogicalCluster)
		old, ok2 := a.GetOldObject().(*corev1alpha1.LogicalCluster)
		if !ok1 || !ok2 {
			return nil
		}
		if err := validateUpdate(old, this); err != nil {
			return admission.NewForbidden(a, err)
		}
	}
	return nil
}

// validateUpdate checks an update against the lifecycle rules.
func validateUpdate(old, this *corev1alpha1.LogicalCluster) error {
	oldSpec, newSpec := initializers(old.Spec.Initializers), initializers(this.Spec.Initializers)
	oldStatus, newStatus := initializers(old.Status.Initializers), initializers(this.Status.Initializers)
	initializing := this.Status.Phase == corev1alpha1.LogicalClusterPhaseInitializing
	toInitializing := old.Status.Phase != corev1alpha1.LogicalClusterPhaseInitializing && initializing
	switch {
	case slices.Contains(old.Finalizers, corev1alpha1.LogicalClusterFinalizerName) &&
		!slices.Contains(this.Finalizers, corev1alpha1.LogicalClusterFinalizerName):
		// kcp's logicalclusterfinalizer admission: the finalizer that has
		// the system delete the cluster's content stays until it has.
		if this.DeletionTimestamp != nil {
			return fmt.Errorf("removing the finalizer %s is forbidden", corev1alpha1.LogicalClusterFinalizerName)
		}
		return fmt.Errorf("finalizer %s is required", corev1alpha1.LogicalClusterFinalizerName)
	case !oldSpec.Equal(newSpec):
		return fmt.Errorf("spec.initializers is immutable")
	case !equality.Semantic.DeepEqual(old.Spec, this.Spec):
		return fmt.Errorf("the spec of a LogicalCluster is written by the system only")
	case old.Status.URL != this.Status.URL:
		return fmt.Errorf("status.URL is written by the system only")
	case !terminatorsKept(old, this):
		return fmt.Errorf("status.terminators only shrink while the logical cluster is deleted")
	case toInitializing && !newSpec.Equal(newStatus):
		return fmt.Errorf("status.initializers do not equal spec.initializers")
	case !toInitializing && initializing && !oldStatus.IsSuperset(newStatus):
		return fmt.Errorf("status.initializers must not grow")
	case !initializing && old.Status.Phase != corev1alpha1.LogicalClusterPhaseInitializing && !oldStatus.Equal(newStatus):
		// (The write that ends initialization may remove the last ones.)
		return fmt.Errorf("status.initializers is immutable after initialization")
	case old.Status.Phase == corev1alpha1.LogicalClusterPhaseInitializing && !initializing && len(this.Status.Initializers) > 0:
		return fmt.Errorf("status.initializers is not empty")
	case phaseOrder[old.Status.Phase] > phaseOrder[this.Status.Phase]:
		return fmt.Errorf("cannot transition from %q to %q", old.Status.Phase, this.Status.Phase)
	}
	return nil
}

// terminatorsKept reports whether status.terminators are unchanged, or
// only shrank while the cluster is deleted (each terminator removing
// itself).
func terminatorsKept(old, this *corev1alpha1.LogicalCluster) bool {
	o, n := sets.New(old.Status.Terminators...), sets.New(this.Status.Terminators...)
	return o.Equal(n) || (old.DeletionTimestamp != nil && o.IsSuperset(n))
}

func initializers(in []corev1alpha1.LogicalClusterInitializer) sets.Set[string] {
	out := sets.New[string]()
	for _, i := range in {
		out.Insert(string(i))
	}
	return out
}
