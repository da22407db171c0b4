// Package controller is the MongoDB example's controller: every MongoDB in
// every workspace that binds the export becomes a MongoDBCommunity object
// (the MongoDB Community Operator's kind) in one namespace of a downstream
// cluster, labelled with the consumer's logical cluster, namespace and
// name; the downstream status flows back, and the connection Secret goes
// into the consumer's namespace through the export's permission claim on
// secrets. A finalizer removes the downstream objects before the MongoDB
// goes. The steps are in reconcile_*.go; see ../README.md.
package controller

import (
	"context"
	"crypto/sha256"
	"encoding/hex"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
	mcbuilder "sigs.k8s.io/multicluster-runtime/pkg/builder"
	mccontroller "sigs.k8s.io/multicluster-runtime/pkg/controller"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"
	"sigs.k8s.io/multicluster-runtime/pkg/multicluster"
	mcreconcile "sigs.k8s.io/multicluster-runtime/pkg/reconcile"

	mongodbv1alpha1 "github.com/meshplane/meshplane/examples/mongodb/api/v1alpha1"
)

const (
	// Finalizer holds a MongoDB until its downstream objects are gone.
	Finalizer = "mongodb.examples.meshplane.io/downstream"
	// LabelCluster, LabelNamespace and LabelName on a downstream object
	// name the consumer's MongoDB it belongs to.
	LabelCluster   = "mongodb.examples.meshplane.io/cluster"
	LabelNamespace = "mongodb.examples.meshplane.io/namespace"
	LabelName      = "mongodb.examples.meshplane.io/name"
	// ManagedBy is the consumersecret.LabelManagedBy value of the
	// consumer Secrets the provider wrote (and may overwrite).
	ManagedBy = "mongodb-provider"
	// Username is the database user the provider creates for the consumer.
	Username = "app"
)

// DownstreamGVK is the MongoDB Community Operator's kind.
var DownstreamGVK = schema.GroupVersionKind{Group: "mongodbcommunity.mongodb.com", Version: "v1", Kind: "MongoDBCommunity"}

// Options configure the controller.
type Options struct {
	// Downstream is the cluster the MongoDBCommunity objects go to (its
	// cache watches Namespace); add it to the manager.
	Downstream cluster.Cluster
	// Namespace in Downstream holding every consumer's objects.
	Namespace string
	// Workers is how many objects are reconciled in parallel (at least 1).
	Workers int
}

// consumer identifies a MongoDB: logical cluster, namespace, name.
type consumer struct {
	cluster   string
	namespace string
	name      string
}

// DownstreamName is the downstream object's name for a consumer's MongoDB:
// stable, DNS-safe, unique per cluster/namespace/name.
func DownstreamName(cluster, namespace, name string) string {
	sum := sha256.Sum256([]byte(cluster + "/" + namespace + "/" + name))
	return "mdb-" + hex.EncodeToString(sum[:])[:16]
}

func (c consumer) downstreamName() string { return DownstreamName(c.cluster, c.namespace, c.name) }

func (c consumer) labels() map[string]string {
	return map[string]string{LabelCluster: c.cluster, LabelNamespace: c.namespace, LabelName: c.name}
}

// SetupWithManager adds the controller to mgr: it watches MongoDBs in every
// engaged workspace and MongoDBCommunity objects downstream, mapped back
// through their labels.
func SetupWithManager(mgr mcmanager.Manager, opts Options) error {
	r := &reconciler{
		cluster: func(ctx context.Context, name string) (cluster.Cluster, error) {
			return mgr.GetCluster(ctx, multicluster.ClusterName(name))
		},
		downstream:       opts.Downstream.GetClient(),
		downstreamReader: opts.Downstream.GetAPIReader(),
		namespace:        opts.Namespace,
	}
	ds := &unstructured.Unstructured{}
	ds.SetGroupVersionKind(DownstreamGVK)
	toConsumer := handler.TypedEnqueueRequestsFromMapFunc(func(_ context.Context, obj *unstructured.Unstructured) []mcreconcile.Request {
		l := obj.GetLabels()
		if l[LabelCluster] == "" || l[LabelName] == "" {
			return nil
		}
		return []mcreconcile.Request{{
			ClusterName: multicluster.ClusterName(l[LabelCluster]),
			Request:     reconcile.Request{NamespacedName: types.NamespacedName{Namespace: l[LabelNamespace], Name: l[LabelName]}},
		}}
	})
	return mcbuilder.ControllerManagedBy(mgr).
		Named("mongodb").
		For(&mongodbv1alpha1.MongoDB{}).
		WatchesRawSource(source.TypedKind[*unstructured.Unstructured, mcreconcile.Request](opts.Downstream.GetCache(), ds, toConsumer)).
		WithOptions(mccontroller.Options{MaxConcurrentReconciles: max(opts.Workers, 1)}).
		Complete(r)
}
