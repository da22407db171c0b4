package dynamic

import (
	"context"
	"fmt"
	"os"
	goruntime "runtime"
	"sync/atomic"
	"testing"
	"time"

	apisv1alpha2 "github.com/kcp-dev/sdk/apis/apis/v1alpha2"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/admission/plugin/policy/generic"
	validatingwebhook "k8s.io/apiserver/pkg/admission/plugin/webhook/validating"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/client-go/tools/cache"

	kcpinformers "github.com/kcp-dev/apimachinery/v2/third_party/informers"

	"github.com/meshplane/meshplane/core/internal/clusters"
)

// fakeInformer is a cluster-aware informer over a fake watch: the test
// adds, updates and deletes objects through it.
type fakeInformer struct {
	cache.SharedIndexInformer
	w *watch.FakeWatcher
}

func newFakeInformer(t *testing.T, example runtime.Object) *fakeInformer {
	w := watch.NewFakeWithChanSize(100, false)
	lw := &cache.ListWatch{
		ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
			return &metav1.List{ListMeta: metav1.ListMeta{ResourceVersion: "1"}}, nil
		},
		WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) { return w, nil },
	}
	return &fakeInformer{SharedIndexInformer: kcpinformers.NewSharedIndexInformer(lw, example, 0, cache.Indexers{}), w: w}
}

func objMeta(cluster, ns, name string, uid types.UID) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: ns, UID: uid, ResourceVersion: "1", Annotations: map[string]string{clusters.Annotation: cluster}}
}

type fixture struct {
	inf                 Informers
	mwh, vwh, vap, vapb *fakeInformer
	ns, bindings        *fakeInformer
	source              *Source
}

func newFixture(t *testing.T) *fixture {
	f := &fixture{
		mwh:      newFakeInformer(t, &admissionregistrationv1.MutatingWebhookConfiguration{}),
		vwh:      newFakeInformer(t, &admissionregistrationv1.ValidatingWebhookConfiguration{}),
		vap:      newFakeInformer(t, &admissionregistrationv1.ValidatingAdmissionPolicy{}),
		vapb:     newFakeInformer(t, &admissionregistrationv1.ValidatingAdmissionPolicyBinding{}),
		ns:       newFakeInformer(t, &corev1.Namespace{}),
		bindings: newFakeInformer(t, &apisv1alpha2.APIBinding{}),
	}
	f.inf = Informers{MutatingWebhooks: f.mwh, ValidatingWebhooks: f.vwh, ValidatingPolicies: f.vap, ValidatingBindings: f.vapb,
		MutatingPolicies:       newFakeInformer(t, &admissionregistrationv1.MutatingAdmissionPolicy{}),
		MutatingPolicyBindings: newFakeInformer(t, &admissionregistrationv1.MutatingAdmissionPolicyBinding{}),
		Namespaces:             f.ns, APIBindings: f.bindings}
	f.source = NewSource(f.inf, nil)
	return f
}

func (f *fixture) run(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	for _, i := range f.inf.all() {
		go i.RunWithContext(ctx)
	}
	if !cache.WaitForCacheSync(ctx.Done(), f.source.HasSynced) {
		t.Fatal("informers did not sync")
	}
}

// eventually waits for the informers to have processed an event.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestClustersAddsTheExportClusterOfBoundResources(t *testing.T) {
	f := newFixture(t)
	f.run(t)
	b := &apisv1alpha2.APIBinding{ObjectMeta: objMeta("consumer", "", "cowboys", "b1")}
	b.Status.APIExportClusterName = "provider"
	b.Status.BoundResources = []apisv1alpha2.BoundAPIResource{{Group: "wildwest.dev", Resource: "cowboys"}}
	f.bindings.w.Add(b)
	eventually(t, "the binding", func() bool { return len(byCluster(f.bindings, "consumer")) == 1 })

	for _, tc := range []struct {
		cluster  string
		resource schema.GroupResource
		want     []string
	}{
		{"consumer", schema.GroupResource{Group: "wildwest.dev", Resource: "cowboys"}, []string{"consumer", "provider"}},
		{"consumer", schema.GroupResource{Resource: "configmaps"}, []string{"consumer"}},
		{"consumer", schema.GroupResource{Group: "wildwest.dev", Resource: "horses"}, []string{"consumer"}},
		{"other", schema.GroupResource{Group: "wildwest.dev", Resource: "cowboys"}, []string{"other"}},
	} {
		got := f.source.Clusters(tc.cluster, tc.resource)
		if len(got) != len(tc.want) || got[0] != tc.want[0] || (len(got) == 2 && got[1] != tc.want[1]) {
			t.Errorf("Clusters(%s, %s) = %v, want %v", tc.cluster, tc.resource, got, tc.want)
		}
	}
}

func TestNamespaceListerIsPerCluster(t *testing.T) {
	f := newFixture(t)
	f.run(t)
	a := &corev1.Namespace{ObjectMeta: objMeta("a", "", "work", "na")}
	a.Labels = map[string]string{"in": "a"}
	b := &corev1.Namespace{ObjectMeta: objMeta("b", "", "work", "nb")}
	b.Labels = map[string]string{"in": "b"}
	f.ns.w.Add(a)
	f.ns.w.Add(b)
	eventually(t, "namespaces", func() bool { return len(byCluster(f.ns, "b")) == 1 })
	for _, c := range []string{"a", "b"} {
		ns, err := namespaceLister{s: f.source, cluster: c}.Get("work")
		if err != nil || ns.Labels["in"] != c {
			t.Errorf("namespace work of cluster %s: got %v, %v; want the one labeled in=%s", c, ns, err, c)
		}
	}
	if _, err := (namespaceLister{s: f.source, cluster: "c"}).Get("work"); err == nil {
		t.Errorf("cluster c has no namespace work, but the lister found one")
	}
}

func TestWebhookPluginsOnlyForClustersWithWebhooks(t *testing.T) {
	f := newFixture(t)
	w := NewValidatingWebhooks(f.source, authorizer.AuthorizerFunc(func(context.Context, authorizer.Attributes) (authorizer.Decision, string, error) {
		return authorizer.DecisionAllow, "", nil
	}))
	f.run(t)

	if p, err := w.pluginFor(context.Background(), "empty", "empty"); p != nil || err != nil {
		t.Fatalf("a cluster without webhooks got a plugin (%v, %v)", p, err)
	}
	if n := w.Plugins(); n != 0 {
		t.Fatalf("%d plugins exist before any cluster has webhooks", n)
	}

	cfg := &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: objMeta("a", "", "deny", "w1"),
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{Name: "deny.example.com", AdmissionReviewVersions: []string{"v1"}}}}
	f.vwh.w.Add(cfg)
	eventually(t, "the configuration", func() bool { return len(byCluster(f.vwh, "a")) == 1 })
	p, err := w.pluginFor(context.Background(), "a", "a")
	if err != nil || p == nil {
		t.Fatalf("cluster a has a webhook but no plugin: %v", err)
	}
	if again, _ := w.pluginFor(context.Background(), "a", "a"); again != p {
		t.Errorf("a second request built a second plugin for cluster a")
	}
	if _, _ = w.pluginFor(context.Background(), "a", "consumer"); w.Plugins() != 2 {
		t.Errorf("want one plugin per (hook cluster, request cluster), got %d", w.Plugins())
	}

	f.vwh.w.Delete(cfg)
	eventually(t, "the plugins of a to go", func() bool { return w.Plugins() == 0 })
}

func TestPoliciesCompiledOncePerVersion(t *testing.T) {
	f := newFixture(t)
	var compiles atomic.Int32
	p := newPolicies(f.source, nil, policyKind[*admissionregistrationv1.ValidatingAdmissionPolicy, *admissionregistrationv1.ValidatingAdmissionPolicyBinding, string]{
		policies: f.vap, bindings: f.vapb,
		compile: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) string {
			compiles.Add(1)
			return p.Name + "@" + p.ResourceVersion
		},
		defaultPolicy: defaultedValidatingPolicy, defaultBinding: defaultedValidatingBinding,
		policyName: func(b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) string { return b.Spec.PolicyName },
		paramKind: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) *admissionregistrationv1.ParamKind {
			return p.Spec.ParamKind
		},
	})
	f.run(t)
	if hooks := mustHooks(t, p, "a"); hooks != nil {
		t.Fatalf("cluster a has no policies but got hooks %v", hooks)
	}

	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: objMeta("a", "", "max", "p1")}
	f.vap.w.Add(policy)
	f.vapb.w.Add(&admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: objMeta("a", "", "max-binding", "b1"),
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: "max"}})
	f.vapb.w.Add(&admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: objMeta("b", "", "max-binding", "b2"),
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: "max"}})
	eventually(t, "policy and bindings", func() bool { return len(byCluster(f.vapb, "b")) == 1 && len(byCluster(f.vap, "a")) == 1 })

	for i := 0; i < 3; i++ {
		hooks := mustHooks(t, p, "a")
		if len(hooks) != 1 || len(hooks[0].Bindings) != 1 || hooks[0].Evaluator != "max@1" {
			t.Fatalf("hooks of a: %+v; want policy max with its one binding of cluster a", hooks)
		}
		if hooks[0].Policy.Spec.MatchConstraints == nil || hooks[0].Policy.Spec.MatchConstraints.NamespaceSelector == nil {
			t.Errorf("the policy handed to the dispatcher is not defaulted: %+v", hooks[0].Policy.Spec)
		}
	}
	if n := compiles.Load(); n != 1 {
		t.Errorf("policy compiled %d times for 3 requests; want once", n)
	}
	if hooks := mustHooks(t, p, "b"); hooks != nil {
		t.Errorf("cluster b has a binding but no policy; got hooks %v", hooks)
	}

	updated := policy.DeepCopy()
	updated.ResourceVersion = "2"
	f.vap.w.Modify(updated)
	eventually(t, "the update", func() bool {
		h := mustHooks(t, p, "a")
		return len(h) == 1 && h[0].Evaluator == "max@2"
	})
	f.vap.w.Delete(updated)
	eventually(t, "the compiled policy to go", func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		return len(p.compiled) == 0
	})
}

func TestDefaults(t *testing.T) {
	v := defaultedValidating(&admissionregistrationv1.ValidatingWebhookConfiguration{Webhooks: []admissionregistrationv1.ValidatingWebhook{{
		Rules: []admissionregistrationv1.RuleWithOperations{{}}}}})
	h := v.Webhooks[0]
	if *h.FailurePolicy != admissionregistrationv1.Fail || *h.MatchPolicy != admissionregistrationv1.Equivalent || *h.TimeoutSeconds != 10 ||
		h.NamespaceSelector == nil || h.ObjectSelector == nil || *h.Rules[0].Scope != admissionregistrationv1.AllScopes {
		t.Errorf("validating webhook defaults: %+v", h)
	}
	m := defaultedMutating(&admissionregistrationv1.MutatingWebhookConfiguration{Webhooks: []admissionregistrationv1.MutatingWebhook{{}}})
	if *m.Webhooks[0].ReinvocationPolicy != admissionregistrationv1.NeverReinvocationPolicy {
		t.Errorf("mutating webhook reinvocationPolicy default: %v", *m.Webhooks[0].ReinvocationPolicy)
	}
	ignore := admissionregistrationv1.Ignore
	p := defaultedValidatingPolicy(&admissionregistrationv1.ValidatingAdmissionPolicy{Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{FailurePolicy: &ignore}})
	if *p.Spec.FailurePolicy != admissionregistrationv1.Ignore || p.Spec.MatchConstraints.ObjectSelector == nil {
		t.Errorf("policy defaults: %+v", p.Spec)
	}
}

// TestMain turns client-go's WatchListClient off, as the server does: the
// fake watch of these tests sends no initial-events bookmark.
func TestMain(m *testing.M) {
	if os.Getenv("KUBE_FEATURE_WatchListClient") == "" {
		_ = os.Setenv("KUBE_FEATURE_WatchListClient", "false")
	}
	os.Exit(m.Run())
}

// BenchmarkWebhookPluginMemory reports the heap one stock webhook plugin
// (a cluster with webhooks, or a consumer of an export with webhooks)
// costs once built.
func BenchmarkWebhookPluginMemory(b *testing.B) {
	t := &testing.T{}
	f := newFixture(t)
	w := NewValidatingWebhooks(f.source, nil)
	f.run(t)
	f.vwh.w.Add(&admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: objMeta("a", "", "deny", "w1"),
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{Name: "deny.example.com", AdmissionReviewVersions: []string{"v1"}}}})
	eventually(t, "the configuration", func() bool { return len(byCluster(f.vwh, "a")) == 1 })
	var before, after goruntime.MemStats
	goruntime.GC()
	goruntime.ReadMemStats(&before)
	n := 100
	for i := 0; i < n; i++ {
		if _, err := w.pluginFor(context.Background(), "a", fmt.Sprintf("consumer-%d", i)); err != nil {
			b.Fatal(err)
		}
	}
	goruntime.GC()
	goruntime.ReadMemStats(&after)
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(n), "B/plugin")
}

func TestSharedConditionCompiler(t *testing.T) {
	p, err := validatingwebhook.NewValidatingAdmissionWebhook(nil)
	if err != nil {
		t.Fatal(err)
	}
	if !shareConditionCompiler(p.Webhook) {
		t.Fatal("generic.Webhook has no field filterCompiler of type cel.ConditionCompiler any more: " +
			"every webhook plugin now builds its own CEL environments; update compiler.go")
	}
}

// mustHooks returns the policies of a cluster on this shard.
func mustHooks[P, B interface {
	runtime.Object
	GetName() string
}, E any](t *testing.T, p *policies[P, B, E], cluster string) []generic.PolicyHook[P, B, E] {
	t.Helper()
	h, err := p.hooks(context.Background(), cluster)
	if err != nil {
		t.Fatal(err)
	}
	return h
}
