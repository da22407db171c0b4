package dynamic

import (
	"context"
	"fmt"
	"sync"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/plugin/policy/generic"
	"k8s.io/apiserver/pkg/admission/plugin/policy/matching"
	mutatingpolicy "k8s.io/apiserver/pkg/admission/plugin/policy/mutating"
	validatingpolicy "k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/meshplane/meshplane/core/internal/clusters"
)

// Params finds the objects a policy's paramKind names in a cluster: a
// lister of that cluster's objects of the kind and whether the kind is
// namespaced. ok is false for a kind the server does not know.
type Params func(cluster string, kind schema.GroupVersionKind) (lister cache.GenericLister, namespaced bool, ok bool)

// policyResources are the admission policy resources themselves, which
// policies never apply to (as on Kubernetes), and the reviews, which are
// not persisted.
var policyExempt = map[schema.GroupResource]bool{
	admissionregistrationv1.Resource("validatingadmissionpolicies"):        true,
	admissionregistrationv1.Resource("validatingadmissionpolicybindings"):  true,
	admissionregistrationv1.Resource("mutatingadmissionpolicies"):          true,
	admissionregistrationv1.Resource("mutatingadmissionpolicybindings"):    true,
	{Group: "authentication.k8s.io", Resource: "tokenreviews"}:             true,
	{Group: "authentication.k8s.io", Resource: "selfsubjectreviews"}:       true,
	{Group: "authorization.k8s.io", Resource: "subjectaccessreviews"}:      true,
	{Group: "authorization.k8s.io", Resource: "selfsubjectaccessreviews"}:  true,
	{Group: "authorization.k8s.io", Resource: "localsubjectaccessreviews"}: true,
	{Group: "authorization.k8s.io", Resource: "selfsubjectrulesreviews"}:   true,
}

// policyKind is what differs between validating and mutating policies.
type policyKind[P, B runtime.Object, E any] struct {
	policies, bindings cache.SharedIndexInformer
	// resources name policies and bindings (for the replicas).
	policyResource, bindingResource string
	compile                         func(P) E
	defaultPolicy                   func(P) P
	defaultBinding                  func(B) B
	policyName                      func(B) string
	paramKind                       func(P) *admissionregistrationv1.ParamKind
}

// compiled is a policy, defaulted, with its evaluator, for one stored
// version of the policy.
type compiled[P any, E any] struct {
	resourceVersion string
	policy          P
	evaluator       E
}

// policies keeps the compiled policies of every cluster that has some.
type policies[P, B interface {
	runtime.Object
	GetName() string
}, E any] struct {
	source *Source
	kind   policyKind[P, B, E]
	params Params

	mu       sync.Mutex
	compiled map[types.UID]compiled[P, E]
}

func newPolicies[P, B interface {
	runtime.Object
	GetName() string
}, E any](s *Source, params Params, kind policyKind[P, B, E]) *policies[P, B, E] {
	p := &policies[P, B, E]{source: s, kind: kind, params: params, compiled: map[types.UID]compiled[P, E]{}}
	s.onHookChange(kind.policies, kind.policyResource, func(obj any, deleted bool) {
		if m, err := meta.Accessor(obj); err == nil && deleted {
			p.mu.Lock()
			delete(p.compiled, m.GetUID())
			p.mu.Unlock()
		}
	})
	return p
}

// hooks returns the policies of cluster, each with its bindings: nil
// for a cluster without policies, which costs nothing.
func (p *policies[P, B, E]) hooks(ctx context.Context, cluster string) ([]generic.PolicyHook[P, B, E], error) {
	objs, err := p.source.hookObjects(ctx, p.kind.policies, p.kind.policyResource, cluster)
	if err != nil || len(objs) == 0 {
		return nil, err
	}
	bs, err := p.source.hookObjects(ctx, p.kind.bindings, p.kind.bindingResource, cluster)
	if err != nil {
		return nil, err
	}
	bindings := map[string][]B{}
	for _, b := range sortedByName[B](bs) {
		name := p.kind.policyName(b)
		bindings[name] = append(bindings[name], p.kind.defaultBinding(b))
	}
	var out []generic.PolicyHook[P, B, E]
	for _, policy := range sortedByName[P](objs) {
		c := p.compile(policy)
		hook := generic.PolicyHook[P, B, E]{Policy: c.policy, Bindings: bindings[policy.GetName()], Evaluator: c.evaluator}
		if pk := p.kind.paramKind(c.policy); pk != nil {
			hook.ParamInformer, hook.ParamScope, hook.ConfigurationError = p.paramSource(cluster, pk)
		}
		out = append(out, hook)
	}
	return out, nil
}

// compile returns the compiled policy, compiling it once per version.
func (p *policies[P, B, E]) compile(policy P) compiled[P, E] {
	m, _ := meta.Accessor(policy)
	p.mu.Lock()
	c, ok := p.compiled[m.GetUID()]
	p.mu.Unlock()
	if ok && c.resourceVersion == m.GetResourceVersion() {
		return c
	}
	d := p.kind.defaultPolicy(policy)
	c = compiled[P, E]{resourceVersion: m.GetResourceVersion(), policy: d, evaluator: p.kind.compile(d)}
	p.mu.Lock()
	p.compiled[m.GetUID()] = c
	p.mu.Unlock()
	return c
}

func (p *policies[P, B, E]) paramSource(cluster string, pk *admissionregistrationv1.ParamKind) (informers.GenericInformer, meta.RESTScope, error) {
	gv, err := schema.ParseGroupVersion(pk.APIVersion)
	if err != nil {
		return nil, nil, fmt.Errorf("paramKind %s: %w", pk.APIVersion, err)
	}
	if p.params == nil {
		return nil, nil, fmt.Errorf("paramKind %s %s not supported", pk.APIVersion, pk.Kind)
	}
	lister, namespaced, ok := p.params(cluster, gv.WithKind(pk.Kind))
	if !ok {
		return nil, nil, fmt.Errorf("paramKind %s %s is not served in this cluster", pk.APIVersion, pk.Kind)
	}
	scope := meta.RESTScopeRoot
	if namespaced {
		scope = meta.RESTScopeNamespace
	}
	return paramInformer{lister: lister}, scope, nil
}

// paramInformer hands a policy's params to the dispatcher: a lister over
// storage, always synced.
type paramInformer struct{ lister cache.GenericLister }

func (i paramInformer) Informer() cache.SharedIndexInformer { return &relayInformer{} }
func (i paramInformer) Lister() cache.GenericLister         { return i.lister }

// requestClusters returns the clusters whose policies apply to a, or nil.
func requestClusters(ctx context.Context, s *Source, a admission.Attributes) (string, []string) {
	cluster, ok := clusters.From(ctx)
	if !ok || cluster == clusters.Wildcard || policyExempt[a.GetResource().GroupResource()] {
		return "", nil
	}
	return cluster, s.Clusters(cluster, a.GetResource().GroupResource())
}

func (s *Source) matcher(cluster string) *matching.Matcher {
	ns := namespaceLister{s: s, cluster: cluster}
	return matching.NewMatcher(ns, namespaceClient{namespaces: ns})
}

// ValidatingPolicies applies ValidatingAdmissionPolicies.
type ValidatingPolicies struct {
	*admission.Handler
	authz    authorizer.Authorizer
	policies *policies[*admissionregistrationv1.ValidatingAdmissionPolicy, *admissionregistrationv1.ValidatingAdmissionPolicyBinding, validatingpolicy.Validator]
}

var _ admission.ValidationInterface = &ValidatingPolicies{}

// NewValidatingPolicies returns the ValidatingAdmissionPolicy plugin.
func NewValidatingPolicies(s *Source, authz authorizer.Authorizer, params Params) *ValidatingPolicies {
	return &ValidatingPolicies{
		Handler: admission.NewHandler(admission.Connect, admission.Create, admission.Delete, admission.Update),
		authz:   authz,
		policies: newPolicies(s, params, policyKind[*admissionregistrationv1.ValidatingAdmissionPolicy, *admissionregistrationv1.ValidatingAdmissionPolicyBinding, validatingpolicy.Validator]{
			policies: s.inf.ValidatingPolicies, bindings: s.inf.ValidatingBindings,
			policyResource: "validatingadmissionpolicies", bindingResource: "validatingadmissionpolicybindings",
			compile: compileValidating, defaultPolicy: defaultedValidatingPolicy, defaultBinding: defaultedValidatingBinding,
			policyName: func(b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) string { return b.Spec.PolicyName },
			paramKind: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) *admissionregistrationv1.ParamKind {
				return p.Spec.ParamKind
			},
		}),
	}
}

// Validate implements admission.ValidationInterface.
func (v *ValidatingPolicies) Validate(ctx context.Context, a admission.Attributes, o admission.ObjectInterfaces) error {
	cluster, hookClusters := requestClusters(ctx, v.policies.source, a)
	for _, c := range hookClusters {
		hooks, err := v.policies.hooks(ctx, c)
		if err != nil {
			return err
		}
		if len(hooks) == 0 {
			continue
		}
		// The object carries its cluster in kcp.io/cluster, as storage
		// will write it: a policy of an export can tell where the request
		// is, and no request can set or hide it.
		stampCluster(a, cluster)
		d := validatingpolicy.NewDispatcher(v.authz, generic.NewPolicyMatcher(v.policies.source.matcher(cluster)))
		if err := d.Dispatch(ctx, a, o, hooks); err != nil {
			return err
		}
	}
	return nil
}

// MutatingPolicies applies MutatingAdmissionPolicies.
type MutatingPolicies struct {
	*admission.Handler
	authz    authorizer.Authorizer
	policies *policies[*admissionregistrationv1.MutatingAdmissionPolicy, *admissionregistrationv1.MutatingAdmissionPolicyBinding, mutatingpolicy.PolicyEvaluator]
}

var _ admission.MutationInterface = &MutatingPolicies{}

// NewMutatingPolicies returns the MutatingAdmissionPolicy plugin.
func NewMutatingPolicies(s *Source, authz authorizer.Authorizer, params Params) *MutatingPolicies {
	return &MutatingPolicies{
		Handler: admission.NewHandler(admission.Connect, admission.Create, admission.Delete, admission.Update),
		authz:   authz,
		policies: newPolicies(s, params, policyKind[*admissionregistrationv1.MutatingAdmissionPolicy, *admissionregistrationv1.MutatingAdmissionPolicyBinding, mutatingpolicy.PolicyEvaluator]{
			policies: s.inf.MutatingPolicies, bindings: s.inf.MutatingPolicyBindings,
			policyResource: "mutatingadmissionpolicies", bindingResource: "mutatingadmissionpolicybindings",
			compile: compileMutating, defaultPolicy: defaultedMutatingPolicy, defaultBinding: defaultedMutatingBinding,
			policyName: func(b *admissionregistrationv1.MutatingAdmissionPolicyBinding) string { return b.Spec.PolicyName },
			paramKind: func(p *admissionregistrationv1.MutatingAdmissionPolicy) *admissionregistrationv1.ParamKind {
				return p.Spec.ParamKind
			},
		}),
	}
}

// Admit implements admission.MutationInterface.
func (m *MutatingPolicies) Admit(ctx context.Context, a admission.Attributes, o admission.ObjectInterfaces) error {
	cluster, hookClusters := requestClusters(ctx, m.policies.source, a)
	for _, c := range hookClusters {
		hooks, err := m.policies.hooks(ctx, c)
		if err != nil {
			return err
		}
		if len(hooks) == 0 {
			continue
		}
		d := mutatingpolicy.NewDispatcher(m.authz, m.policies.source.matcher(cluster), deducedTypes{})
		if err := d.Dispatch(ctx, a, o, hooks); err != nil {
			return err
		}
	}
	return nil
}

// deducedTypes gives apply-configuration mutations a type converter that
// deduces the structure from the object itself (maps merge, lists are
// replaced).
type deducedTypes struct{}

func (deducedTypes) Run(context.Context) {}
func (deducedTypes) GetTypeConverter(schema.GroupVersionKind) managedfields.TypeConverter {
	return managedfields.NewDeducedTypeConverter()
}
