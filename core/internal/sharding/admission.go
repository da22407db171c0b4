package sharding

import (
	kcpcache "github.com/kcp-dev/apimachinery/v2/pkg/cache"
	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// The admission kinds every shard replicates from the others: an
// APIExport's policies and webhooks apply to its resources in every
// cluster that binds it, on whichever shard that cluster is
// (docs/sharding.md). The whole kind is replicated (these objects are
// few and small); readers look up one cluster with InCluster.
var (
	ValidatingPolicies = Kind{admissionregistrationv1.SchemeGroupVersion.WithResource("validatingadmissionpolicies"),
		func() runtime.Object { return &admissionregistrationv1.ValidatingAdmissionPolicy{} }}
	ValidatingPolicyBindings = Kind{admissionregistrationv1.SchemeGroupVersion.WithResource("validatingadmissionpolicybindings"),
		func() runtime.Object { return &admissionregistrationv1.ValidatingAdmissionPolicyBinding{} }}
	MutatingPolicies = Kind{admissionregistrationv1.SchemeGroupVersion.WithResource("mutatingadmissionpolicies"),
		func() runtime.Object { return &admissionregistrationv1.MutatingAdmissionPolicy{} }}
	MutatingPolicyBindings = Kind{admissionregistrationv1.SchemeGroupVersion.WithResource("mutatingadmissionpolicybindings"),
		func() runtime.Object { return &admissionregistrationv1.MutatingAdmissionPolicyBinding{} }}
	ValidatingWebhooks = Kind{admissionregistrationv1.SchemeGroupVersion.WithResource("validatingwebhookconfigurations"),
		func() runtime.Object { return &admissionregistrationv1.ValidatingWebhookConfiguration{} }}
	MutatingWebhooks = Kind{admissionregistrationv1.SchemeGroupVersion.WithResource("mutatingwebhookconfigurations"),
		func() runtime.Object { return &admissionregistrationv1.MutatingWebhookConfiguration{} }}
)

// AdmissionKinds are the replicated admission kinds.
var AdmissionKinds = []Kind{ValidatingPolicies, ValidatingPolicyBindings, MutatingPolicies, MutatingPolicyBindings,
	ValidatingWebhooks, MutatingWebhooks}

// Placement is where InCluster found a cluster.
type Placement int

const (
	// Unknown: no other shard's replica holds the cluster.
	Unknown Placement = iota
	// Elsewhere: another shard holds the cluster and its replica of the
	// kind has synced; the objects are those of that shard.
	Elsewhere
	// NotSynced: another shard holds the cluster but its replica of the
	// kind has not listed yet.
	NotSynced
)

// InCluster returns the replicated objects of kind in a cluster held by
// another shard, and where it found the cluster.
func (o *Others) InCluster(kind Kind, cluster string) ([]runtime.Object, Placement) {
	o.mu.Lock()
	defer o.mu.Unlock()
	key := kcpcache.ToClusterAwareKey(cluster, "", corev1alpha1.LogicalClusterName)
	for _, r := range o.running {
		if _, ok, _ := r.informers[LogicalClusters.GVR].GetIndexer().GetByKey(key); !ok {
			continue
		}
		inf := r.informer(kind)
		if inf == nil {
			return nil, Unknown
		}
		if !inf.HasSynced() {
			return nil, NotSynced
		}
		objs, _ := inf.GetIndexer().ByIndex(kcpcache.ClusterIndexName, cluster)
		out := make([]runtime.Object, 0, len(objs))
		for _, obj := range objs {
			out = append(out, obj.(runtime.Object))
		}
		return out, Elsewhere
	}
	return nil, Unknown
}
