// Package namespace empties and then removes namespaces being deleted, in
// every logical cluster: the work kube's namespace controller does.
//
// Reconcile steps for a namespace with a deletion timestamp:
//  1. delete every namespaced object in it, of built-in and custom resources;
//  2. wait until nothing is left (objects may carry finalizers);
//  3. remove the "kubernetes" finalizer through namespaces/finalize;
//  4. delete the namespace again, which now removes it.
package namespace

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/meshplane/meshplane/core/pkg/clusters"
	"github.com/meshplane/meshplane/core/pkg/reconciler/runner"
)

// Content is a namespaced resource whose objects the controller deletes.
type Content interface {
	rest.Lister
	rest.CollectionDeleter
}

// Controller removes namespaces being deleted.
type Controller struct {
	// Namespaces is the namespace registry; Finalize its /finalize subresource.
	Namespaces Namespaces
	Finalize   rest.Updater
	// Contents lists the namespaced resources of a cluster.
	Contents func(cluster string) []Content

	informer cache.SharedIndexInformer
	runner   *runner.Runner
}

// Namespaces is the namespace registry the controller reads and deletes
// through.
type Namespaces interface {
	rest.Lister
	rest.Watcher
	rest.Getter
	rest.GracefulDeleter
}

// New returns the controller. finalize is the namespaces/finalize
// subresource; informer follows namespaces in every cluster (the caller
// runs it).
func New(namespaces Namespaces, finalize rest.Updater, contents func(cluster string) []Content, informer cache.SharedIndexInformer) *Controller {
	return &Controller{Namespaces: namespaces, Finalize: finalize, Contents: contents, informer: informer}
}

// Run works until ctx is done.
func (c *Controller) Run(ctx context.Context) {
	c.runner = runner.New("namespace", 2, func(ctx context.Context, key runner.Key) (time.Duration, error) {
		if requeue, err := c.reconcile(ctx, key.Cluster, key.Name); requeue || err != nil {
			return 2 * time.Second, err
		}
		return 0, nil
	})
	_ = c.runner.EnqueueFrom(c.informer, func(obj any) []runner.Key {
		if ns, ok := obj.(*corev1.Namespace); ok && ns.DeletionTimestamp != nil {
			return runner.ObjectKeys(ns)
		}
		return nil
	})
	c.runner.Run(ctx)
}

func (c *Controller) reconcile(ctx context.Context, cluster, name string) (requeue bool, err error) {
	clusterCtx := genericapirequest.WithNamespace(clusters.WithCluster(ctx, cluster), metav1.NamespaceNone)
	obj, err := c.Namespaces.Get(clusterCtx, name, &metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	ns := obj.(*corev1.Namespace)
	if ns.DeletionTimestamp == nil {
		return false, nil
	}
	inNS := genericapirequest.WithNamespace(clusters.WithCluster(ctx, cluster), name)
	left := 0
	for _, content := range c.Contents(cluster) {
		if _, err := content.DeleteCollection(inNS, rest.ValidateAllObjectFunc, &metav1.DeleteOptions{},
			&metainternalversion.ListOptions{}); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsMethodNotSupported(err) {
			return false, fmt.Errorf("deleting content: %w", err)
		}
		list, err := content.List(inNS, &metainternalversion.ListOptions{})
		if err != nil {
			continue
		}
		if n := meta.LenList(list); n > 0 {
			left += n
		}
	}
	if left > 0 {
		return true, nil
	}
	if slices.Contains(ns.Spec.Finalizers, corev1.FinalizerKubernetes) {
		ns = ns.DeepCopy()
		keep := slices.DeleteFunc(slices.Clone(ns.Spec.Finalizers), func(f corev1.FinalizerName) bool { return f == corev1.FinalizerKubernetes })
		ns.Spec.Finalizers = keep
		if _, _, err := c.Finalize.Update(clusterCtx, name, rest.DefaultUpdatedObjectInfo(ns), rest.ValidateAllObjectFunc,
			rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{}); err != nil {
			return false, fmt.Errorf("finalizing: %w", err)
		}
		if len(keep) > 0 {
			return false, nil // other finalizers decide when it goes
		}
	}
	if _, _, err := c.Namespaces.Delete(clusterCtx, name, rest.ValidateAllObjectFunc, &metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return false, err
	}
	return false, nil
}
