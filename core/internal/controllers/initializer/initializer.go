// Package initializer runs in-process workspace initializers: it follows
// the LogicalClusters that still carry an initializer, runs the
// initializer's step on each, and removes the initializer from the
// cluster once the step reports it is done.
package initializer

import (
	"context"
	"time"

	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	"github.com/kcp-dev/sdk/apis/tenancy/initialization"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/meshplane/meshplane/core/internal/clusters"
	"github.com/meshplane/meshplane/core/internal/reconciler/client"
	"github.com/meshplane/meshplane/core/internal/reconciler/runner"
	"github.com/meshplane/meshplane/core/internal/tenancy"
)

// Step initializes one cluster. It returns done once the initializer may
// be removed; otherwise it is called again after requeue.
type Step func(ctx context.Context, cluster string, lc *corev1alpha1.LogicalCluster) (done bool, requeue time.Duration, err error)

// Initializer is one in-process initializer.
type Initializer struct {
	Name            corev1alpha1.LogicalClusterInitializer
	LogicalClusters client.Client[*corev1alpha1.LogicalCluster]
	Index           *tenancy.Index
	Step            Step
}

// Run works until ctx is done.
func (i *Initializer) Run(ctx context.Context, workers int) {
	r := runner.New(string(i.Name), workers, i.reconcile)
	_ = r.EnqueueFrom(i.Index.Informer(), func(obj any) []runner.Key {
		lc, ok := obj.(*corev1alpha1.LogicalCluster)
		if !ok || lc.Status.Phase != corev1alpha1.LogicalClusterPhaseInitializing ||
			!initialization.InitializerPresent(i.Name, lc.Status.Initializers) {
			return nil
		}
		return []runner.Key{runner.ClusterKey(lc.Annotations[clusters.Annotation])}
	})
	r.Run(ctx)
}

func (i *Initializer) reconcile(ctx context.Context, key runner.Key) (time.Duration, error) {
	cluster := key.Cluster
	// From the index's informer, at least as fresh as the event that woke
	// this key (a stale read ends in a conflict and another round). Steps
	// must not change lc.
	lc, err := client.StoredOrLive(ctx, i.Index.Informer().GetStore(), i.LogicalClusters, cluster, "", corev1alpha1.LogicalClusterName)
	if apierrors.IsNotFound(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	if !initialization.InitializerPresent(i.Name, lc.Status.Initializers) {
		return 0, nil
	}
	done, requeue, err := i.Step(ctx, cluster, lc)
	if err != nil || !done {
		return requeue, err
	}
	lc = lc.DeepCopy()
	lc.Status.Initializers = initialization.EnsureInitializerAbsent(i.Name, lc.Status.Initializers)
	tenancy.SettleInitializers(lc) // the last one: Ready in the same write
	_, err = i.LogicalClusters.UpdateStatus(ctx, cluster, "", lc.Name, lc)
	return 0, err
}
