// Package logicalcluster guards a workspace's LogicalCluster (its
// lifecycle state) against its users, as kcp's admission does: only the
// system's own credentials create or delete it, and updates by anyone else
// keep the lifecycle rules: spec.initializers is immutable, the phase
// never goes back, status.initializers only shrinks while initializing
// (and is empty when initialization ends, unchanged after it).
package logicalcluster

import (
	"context"
	"fmt"

	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authentication/user"

	"github.com/meshplane/meshplane/core/internal/tenancy"
)

// privilegedGroups are the system's own credentials.
var privilegedGroups = []string{user.SystemPrivilegedGroup, "system:kcp:logical-cluster-admin", "system:kcp:workspace-bootstrapper"}

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
func (p *Plugin) Validate(_ context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	if a.GetResource().GroupResource() != corev1alpha1.Resource("logicalclusters") {
		return nil
	}
	if u := a.GetUserInfo(); u != nil && sets.New(u.GetGroups()...).HasAny(privilegedGroups...) {
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
	case !oldSpec.Equal(newSpec):
		return fmt.Errorf("spec.initializers is immutable")
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

func initializers(in []corev1alpha1.LogicalClusterInitializer) sets.Set[string] {
	out := sets.New[string]()
	for _, i := range in {
		out.Insert(string(i))
	}
	return out
}
