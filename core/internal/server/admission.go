package server

import (
	"context"

	apisv1alpha2 "github.com/kcp-dev/sdk/apis/apis/v1alpha2"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"

	"github.com/meshplane/meshplane/core/internal/admission/dynamic"
	builtinapi "github.com/meshplane/meshplane/core/internal/apis/builtin"
	"github.com/meshplane/meshplane/core/internal/clusters"
	"github.com/meshplane/meshplane/core/internal/registry/wildcard"
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
