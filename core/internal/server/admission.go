package server

import (
	"context"
	"fmt"

	apisv1alpha2 "github.com/kcp-dev/sdk/apis/apis/v1alpha2"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/client-go/tools/cache"

	"github.com/meshplane/meshplane/core/internal/admission/dynamic"
	builtinapi "github.com/meshplane/meshplane/core/internal/apis/builtin"
	"github.com/meshplane/meshplane/core/internal/clusters"
	"github.com/meshplane/meshplane/core/internal/registry/wildcard"
	"github.com/meshplane/meshplane/core/internal/sharding"
	"github.com/meshplane/meshplane/core/internal/tenancy"
)

// dynamicAdmission builds the admission webhooks and policies of every
// cluster (see admission/dynamic) on the shared wildcard informers, in
// kube's order: mutating policies, mutating webhooks, validating
// policies, validating webhooks.
func (p *parts) dynamicAdmission() []admission.Interface {
	gv := admissionregistrationv1.SchemeGroupVersion
	st := func(resource string) wildcard.Storage { return p.storage[gv][resource].(wildcard.Storage) }
	inf := p.informers
	source := dynamic.NewSource(dynamic.Informers{
		MutatingWebhooks:       inf.of(st("mutatingwebhookconfigurations"), &admissionregistrationv1.MutatingWebhookConfiguration{}),
		ValidatingWebhooks:     inf.of(st("validatingwebhookconfigurations"), &admissionregistrationv1.ValidatingWebhookConfiguration{}),
		ValidatingPolicies:     inf.of(st("validatingadmissionpolicies"), &admissionregistrationv1.ValidatingAdmissionPolicy{}),
		ValidatingBindings:     inf.of(st("validatingadmissionpolicybindings"), &admissionregistrationv1.ValidatingAdmissionPolicyBinding{}),
		MutatingPolicies:       inf.of(st("mutatingadmissionpolicies"), &admissionregistrationv1.MutatingAdmissionPolicy{}),
		MutatingPolicyBindings: inf.of(st("mutatingadmissionpolicybindings"), &admissionregistrationv1.MutatingAdmissionPolicyBinding{}),
		Namespaces:             inf.of(p.reg.namespaceStore, &corev1.Namespace{}),
		APIBindings:            inf.of(p.reg.bindings.Storage, &apisv1alpha2.APIBinding{}),
	}, func(ctx context.Context, cluster, name string) (*corev1.Namespace, error) {
		return registryNamespaceGetter(p.reg.namespaceStore)(clusters.WithCluster(ctx, cluster), name)
	})
	if shards := p.sharding.shards; shards != nil {
		source.WithRemote(&remoteAdmission{index: p.index, others: shards.Others()})
	}
	params := dynamic.StorageParams(p.paramStorage())
	mutating, validating := dynamic.NewMutatingWebhooks(source, p.authz), dynamic.NewValidatingWebhooks(source, p.authz)
	mutating.ForwardTraceContext(p.config.Generic.TracerProvider)
	validating.ForwardTraceContext(p.config.Generic.TracerProvider)
	return []admission.Interface{
		dynamic.NewMutatingPolicies(source, p.authz, params),
		mutating,
		dynamic.NewValidatingPolicies(source, p.authz, params),
		validating,
	}
}

// paramStorage maps the built-in kinds to their registries: what a
// policy's paramKind may name.
func (p *parts) paramStorage() map[schema.GroupVersionKind]dynamic.ParamStorage {
	out := map[schema.GroupVersionKind]dynamic.ParamStorage{}
	for gv, byResource := range p.storage {
		for _, st := range byResource {
			ps, ok := st.(dynamic.ParamStorage)
			if !ok {
				continue
			}
			kinds, _, err := builtinapi.Scheme.ObjectKinds(ps.New())
			if err != nil {
				continue
			}
			for _, k := range kinds {
				if k.Group == gv.Group && k.Version == gv.Version {
					out[k] = ps
				}
			}
		}
	}
	return out
}

// remoteAdmission reads the admission objects of the clusters other shards
// hold from their replicas (an APIExport bound here whose workspace is on
// another shard).
type remoteAdmission struct {
	index  *tenancy.Index
	others *sharding.Others
}

var _ dynamic.Remote = &remoteAdmission{}

func admissionKind(resource string) sharding.Kind {
	for _, k := range sharding.AdmissionKinds {
		if k.GVR.Resource == resource {
			return k
		}
	}
	panic("not a replicated admission resource: " + resource)
}

// Objects implements dynamic.Remote. It fails closed: while this shard
// cannot tell where a cluster is, or the replica of the shard that holds
// it has not listed yet, it answers an error.
func (r *remoteAdmission) Objects(resource, cluster string) ([]any, error) {
	if _, ok := r.index.Get(cluster); ok {
		return nil, nil
	}
	objs, where := r.others.InCluster(admissionKind(resource), cluster)
	switch where {
	case sharding.Elsewhere:
		out := make([]any, 0, len(objs))
		for _, o := range objs {
			out = append(out, o)
		}
		return out, nil
	case sharding.NotSynced:
		return nil, fmt.Errorf("the replica of %s of the shard that holds it has not synced", resource)
	}
	if !r.index.HasSynced() || !r.others.HasSynced() {
		return nil, fmt.Errorf("the shards are not all replicated yet")
	}
	// No shard holds the cluster (an export whose workspace is gone).
	return nil, nil
}

// OnChange implements dynamic.Remote.
func (r *remoteAdmission) OnChange(resource string, f func(obj any, deleted bool)) {
	_, _ = r.others.Source(admissionKind(resource)).AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { f(obj, false) },
		UpdateFunc: func(_, obj any) { f(obj, false) },
		DeleteFunc: func(obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			f(obj, true)
		},
	})
}
