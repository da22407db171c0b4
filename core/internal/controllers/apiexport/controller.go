// Package apiexport gives every APIExport its identity and its default
// endpoint slice, and keeps endpoint slices pointing at the export's
// virtual workspace while any cluster binds the export.
//
// Reconcile steps for an export (one file each):
//  1. reconcile_identity.go: identity secret (kcp-system/<name>, key
//     "key"), spec.identity, status.identityHash;
//  2. reconcile_defaultslice.go: the default APIExportEndpointSlice.
//
// For a slice, reconcile_endpoints.go: this shard's
// <virtual workspace URL>/services/apiexport/<cluster>/<export> among the
// endpoints while a cluster of this shard binds the export; for slices of
// other shards (Others), the same URL written there.
package apiexport

import (
	"context"
	"time"

	apisv1alpha1 "github.com/kcp-dev/sdk/apis/apis/v1alpha1"
	apisv1alpha2 "github.com/kcp-dev/sdk/apis/apis/v1alpha2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/cache"

	"github.com/meshplane/meshplane/core/internal/apiexport"
	"github.com/meshplane/meshplane/core/internal/clusters"
	"github.com/meshplane/meshplane/core/internal/reconciler/client"
	"github.com/meshplane/meshplane/core/internal/reconciler/runner"
	"github.com/meshplane/meshplane/core/internal/tenancy"
)

// SkipSliceAnnotation on an export suppresses its default endpoint slice.
const SkipSliceAnnotation = "apiexports.apis.kcp.io/skip-endpointslice"

// Controller reconciles exports and endpoint slices.
type Controller struct {
	exports        client.Client[*apisv1alpha2.APIExport]
	slices         client.Client[*apisv1alpha1.APIExportEndpointSlice]
	index          *tenancy.Index
	consumers      *apiexport.Consumers
	exportInformer cache.SharedIndexInformer
	sliceInformer  cache.SharedIndexInformer

	others *Others

	identity     *identityReconciler
	defaultSlice *defaultSliceReconciler
	endpoints    *endpointsReconciler
}

// Others are the slices of the other shards and how to reach them.
type Others struct {
	// Slices and Exports send the events of the other shards' slices
	// and exports.
	Slices, Exports runner.Source
	// List lists them, Get reads one (the replica's copy) and the shard it is on.
	List func() []*apisv1alpha1.APIExportEndpointSlice
	Get  func(cluster, name string) (*apisv1alpha1.APIExportEndpointSlice, string, bool)
	// UpdateStatus writes a slice's status on its shard.
	UpdateStatus func(ctx context.Context, shard, cluster string, s *apisv1alpha1.APIExportEndpointSlice) error
	// Resolve resolves a workspace path on any shard.
	Resolve func(path string) (string, bool)
}

// New returns the controller. The informers follow exports and slices in
// every cluster; the caller runs them. exports reads exports of every
// shard; vwURL is this shard's virtual workspace URL; others is nil on
// an install of one shard.
func New(exports client.Client[*apisv1alpha2.APIExport], exportsAnywhere client.Reader[*apisv1alpha2.APIExport], slices client.Client[*apisv1alpha1.APIExportEndpointSlice],
	secrets client.Client[*corev1.Secret], namespaces client.Writer[*corev1.Namespace], index *tenancy.Index,
	consumers *apiexport.Consumers, vwURL string, exportInformer, sliceInformer cache.SharedIndexInformer, others *Others) *Controller {
	c := &Controller{exports: exports, slices: slices, index: index, consumers: consumers,
		exportInformer: exportInformer, sliceInformer: sliceInformer, others: others}
	c.identity = &identityReconciler{
		createNamespace: func(ctx context.Context, cluster string, ns *corev1.Namespace) error {
			_, err := namespaces.Create(ctx, cluster, "", ns)
			return err
		},
		createSecret: func(ctx context.Context, cluster string, s *corev1.Secret) error {
			_, err := secrets.Create(ctx, cluster, s.Namespace, s)
			return err
		},
		getSecret: func(ctx context.Context, cluster, namespace, name string) (*corev1.Secret, error) {
			return secrets.Get(ctx, cluster, namespace, name)
		},
		update: func(ctx context.Context, cluster string, e *apisv1alpha2.APIExport) error {
			_, err := exports.Update(ctx, cluster, "", e.Name, e)
			return err
		},
		updateStatus: func(ctx context.Context, cluster string, e *apisv1alpha2.APIExport) error {
			_, err := exports.UpdateStatus(ctx, cluster, "", e.Name, e)
			return err
		},
	}
	c.defaultSlice = &defaultSliceReconciler{
		path: index.Path,
		createSlice: func(ctx context.Context, cluster string, s *apisv1alpha1.APIExportEndpointSlice) error {
			_, err := slices.Create(ctx, cluster, "", s)
			return err
		},
	}
	c.endpoints = &endpointsReconciler{
		exportCluster: c.exportCluster,
		exportExists: func(ctx context.Context, cluster, name string) bool {
			_, err := exportsAnywhere.Get(ctx, cluster, "", name)
			return err == nil
		},
		bound: func(cluster, name string) bool { return len(consumers.Of(cluster, name)) > 0 },
		updateStatus: func(ctx context.Context, cluster string, s *apisv1alpha1.APIExportEndpointSlice) error {
			_, err := slices.UpdateStatus(ctx, cluster, "", s.Name, s)
			return err
		},
		externalURL: vwURL,
	}
	return c
}

// Run works until ctx is done.
func (c *Controller) Run(ctx context.Context) {
	exports := runner.New("apiexport", 2, c.reconcileExport)
	slices := runner.New("apiexportendpointslice", 2, c.reconcileSlice)
	_ = exports.EnqueueFrom(c.exportInformer, runner.ObjectKeys)
	_ = slices.EnqueueFrom(c.sliceInformer, runner.ObjectKeys)
	// An export that comes or goes concerns the slices pointing at it.
	sliceKeys := func(obj any) []runner.Key {
		if e, ok := obj.(*apisv1alpha2.APIExport); ok {
			return c.slicesOf(e.Annotations[clusters.Annotation], e.Name)
		}
		return nil
	}
	_ = slices.EnqueueFrom(c.exportInformer, sliceKeys)
	if c.others != nil {
		_ = slices.EnqueueFrom(c.others.Slices, runner.ObjectKeys)
		_ = slices.EnqueueFrom(c.others.Exports, sliceKeys)
	}
	c.consumers.OnChange(func(exportCluster, exportName string) {
		for _, k := range c.slicesOf(exportCluster, exportName) {
			slices.Add(k)
		}
	})
	go exports.Run(ctx)
	slices.Run(ctx)
}

// slicesOf returns the keys of the slices that point at an export.
func (c *Controller) slicesOf(exportCluster, exportName string) []runner.Key {
	var out []runner.Key
	all := c.sliceInformer.GetStore().List()
	if c.others != nil {
		for _, s := range c.others.List() {
			all = append(all, s)
		}
	}
	for _, o := range all {
		s := o.(*apisv1alpha1.APIExportEndpointSlice)
		cluster := s.Annotations[clusters.Annotation]
		if c.exportCluster(cluster, s.Spec.APIExport.Path) == exportCluster && s.Spec.APIExport.Name == exportName {
			out = append(out, runner.ObjectKeys(s)...)
		}
	}
	return out
}

// exportCluster resolves an export path as seen from cluster.
func (c *Controller) exportCluster(cluster, path string) string {
	if path == "" {
		return cluster
	}
	if name, ok := c.index.Resolve(path); ok {
		return name
	}
	if c.others != nil {
		if name, ok := c.others.Resolve(path); ok {
			return name
		}
	}
	return ""
}

func (c *Controller) reconcileExport(ctx context.Context, key runner.Key) (time.Duration, error) {
	export, err := c.exports.Get(ctx, key.Cluster, "", key.Name)
	if apierrors.IsNotFound(err) || (err == nil && export.DeletionTimestamp != nil) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	export, requeue, err := c.identity.reconcile(ctx, key.Cluster, export)
	if err != nil || export == nil {
		return requeue, err // a nil export: the spec update brings it back, or requeue
	}
	return 0, c.defaultSlice.reconcile(ctx, key.Cluster, export)
}

func (c *Controller) reconcileSlice(ctx context.Context, key runner.Key) (time.Duration, error) {
	slice, err := c.slices.Get(ctx, key.Cluster, "", key.Name)
	if apierrors.IsNotFound(err) {
		if c.others == nil {
			return 0, nil
		}
		other, shard, ok := c.others.Get(key.Cluster, key.Name)
		if !ok {
			return 0, nil
		}
		// A slice of another shard: only this shard's URL is ours to write.
		r := *c.endpoints
		r.updateStatus = func(ctx context.Context, cluster string, s *apisv1alpha1.APIExportEndpointSlice) error {
			return c.others.UpdateStatus(ctx, shard, cluster, s)
		}
		return 0, r.reconcileOther(ctx, key.Cluster, other.DeepCopy())
	}
	if err != nil {
		return 0, err
	}
	return c.endpoints.reconcile(ctx, key.Cluster, slice)
}
