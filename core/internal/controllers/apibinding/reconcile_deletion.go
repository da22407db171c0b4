package apibinding

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	apisv1alpha2 "github.com/kcp-dev/sdk/apis/apis/v1alpha2"
	conditionsv1alpha1 "github.com/kcp-dev/sdk/apis/third_party/conditions/apis/conditions/v1alpha1"
	"github.com/kcp-dev/sdk/apis/third_party/conditions/util/conditions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/klog/v2"

	"github.com/meshplane/meshplane/core/internal/registry/builtin"
)

// Reasons of BindingResourceDeleteSuccess, as kcp's.
const (
	resourceDeletionFailedReason   = "ResourceDeletionFailed"
	resourceRemainingReason        = "SomeResourcesRemain"
	resourceFinalizersRemainReason = "SomeFinalizersRemain"
)

// deletionRecheck is how soon a binding whose objects are still going is
// looked at again (kcp: half its 5s estimate, plus one).
const deletionRecheck = 3 * time.Second

// Remaining describes the objects of a bound resource still stored.
type Remaining struct {
	Objects int
	// Finalizers counts the objects each finalizer still holds.
	Finalizers map[string]int
}

// deletionReconciler deletes the objects of a deleted binding's resources
// in the consumer and waits, as kcp does, until they are gone, those held
// by their own finalizers included (they stay served, in their deleting
// state, meanwhile); then it stops serving them and releases the binding.
type deletionReconciler struct {
	bound        func(cluster, binding string) []*apiextensionsv1.CustomResourceDefinition
	deleteAll    func(ctx context.Context, cluster string, def *apiextensionsv1.CustomResourceDefinition) error
	remaining    func(ctx context.Context, cluster string, def *apiextensionsv1.CustomResourceDefinition) (Remaining, error)
	forget       func(cluster, binding string)
	update       func(ctx context.Context, cluster string, b *apisv1alpha2.APIBinding) error
	updateStatus func(ctx context.Context, cluster string, b *apisv1alpha2.APIBinding) error
}

func (r *deletionReconciler) reconcile(ctx context.Context, cluster string, b *apisv1alpha2.APIBinding) (time.Duration, error) {
	want := b.DeepCopy()
	objects, finalizers := map[string]int{}, map[string]int{}
	for _, def := range r.bound(cluster, b.Name) {
		klog.FromContext(ctx).V(2).Info("Deleting objects of unbound resource", "resource", def.Name)
		err := r.deleteAll(ctx, cluster, def)
		var left Remaining
		if err == nil {
			left, err = r.remaining(ctx, cluster, def)
		}
		if err != nil {
			conditions.MarkFalse(want, apisv1alpha2.BindingResourceDeleteSuccess, resourceDeletionFailedReason, conditionsv1alpha1.ConditionSeverityError,
				"deleting %s: %v", def.Name, err)
			if uerr := r.writeStatus(ctx, cluster, b, want); uerr != nil {
				return 0, uerr
			}
			return 0, fmt.Errorf("deleting %s: %w", def.Name, err)
		}
		if left.Objects > 0 {
			objects[def.Name] = left.Objects
		}
		for f, n := range left.Finalizers {
			finalizers[f] += n
		}
	}
	switch {
	case len(finalizers) > 0:
		conditions.MarkFalse(want, apisv1alpha2.BindingResourceDeleteSuccess, resourceFinalizersRemainReason, conditionsv1alpha1.ConditionSeverityError,
			"Some content in the workspace has finalizers remaining: %s", describe(finalizers, "%s in %d resource instances"))
	case len(objects) > 0:
		conditions.MarkFalse(want, apisv1alpha2.BindingResourceDeleteSuccess, resourceRemainingReason, conditionsv1alpha1.ConditionSeverityError,
			"Some resources are remaining: %s", describe(objects, "%s has %d resource instances"))
	}
	if len(finalizers) > 0 || len(objects) > 0 {
		return deletionRecheck, r.writeStatus(ctx, cluster, b, want)
	}
	r.forget(cluster, b.Name)
	if !slices.Contains(b.Finalizers, builtin.BindingFinalizer) {
		return 0, nil
	}
	want.Finalizers = slices.DeleteFunc(want.Finalizers, func(f string) bool { return f == builtin.BindingFinalizer })
	conditions.MarkTrue(want, apisv1alpha2.BindingResourceDeleteSuccess)
	if err := r.update(ctx, cluster, want); err != nil && !apierrors.IsNotFound(err) {
		return 0, err
	}
	return 0, nil
}

// writeStatus writes want's status if it differs from b's.
func (r *deletionReconciler) writeStatus(ctx context.Context, cluster string, b, want *apisv1alpha2.APIBinding) error {
	if equality.Semantic.DeepEqual(b.Status, want.Status) {
		return nil
	}
	if err := r.updateStatus(ctx, cluster, want); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return nil
}

// describe lists counts in a stable order.
func describe(counts map[string]int, format string) string {
	out := make([]string, 0, len(counts))
	for k, n := range counts {
		out = append(out, fmt.Sprintf(format, k, n))
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}
