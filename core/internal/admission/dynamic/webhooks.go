package dynamic

import (
	"context"
	"fmt"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/mutating"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/predicates/rules"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/validating"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericfeatures "k8s.io/apiserver/pkg/features"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	webhookutil "k8s.io/apiserver/pkg/util/webhook"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/meshplane/meshplane/core/internal/clusters"
	"github.com/meshplane/meshplane/core/internal/tracecontext"
)

// maxRequestClusters bounds the stock plugins of one hook cluster: its
// own and those for the consumers of its APIExports.
const maxRequestClusters = 128

// webhookKind is what differs between mutating and validating webhooks.
type webhookKind struct {
	mutating bool
	informer cache.SharedIndexInformer
	// resource names the configurations (for the replicas).
	resource string
}

// Webhooks is the admission plugin of one kind of admission webhook
// (mutating or validating) for every logical cluster.
type Webhooks struct {
	*admission.Handler
	source *Source
	kind   webhookKind
	authz  authorizer.Authorizer
	// clientWrapper wraps the webhook clients' configurations (see
	// ForwardTraceContext); nil leaves kube's as they are.
	clientWrapper webhookutil.AuthenticationInfoResolverWrapper

	mu sync.RWMutex
	// plugins holds the stock plugins: hook cluster -> request cluster.
	plugins map[string]map[string]*clusterPlugin
}

// clusterPlugin is a stock webhook plugin dispatching one cluster's
// webhooks for requests in one cluster.
type clusterPlugin struct {
	plugin admission.Interface
	relay  *relayInformer
}

var (
	_ admission.MutationInterface   = &MutatingWebhooks{}
	_ admission.ValidationInterface = &ValidatingWebhooks{}
)

// MutatingWebhooks calls the MutatingWebhookConfigurations that apply.
type MutatingWebhooks struct{ *Webhooks }

// ValidatingWebhooks calls the ValidatingWebhookConfigurations that apply.
type ValidatingWebhooks struct{ *Webhooks }

// NewMutatingWebhooks returns the mutating webhook plugin.
func NewMutatingWebhooks(s *Source, authz authorizer.Authorizer) *MutatingWebhooks {
	return &MutatingWebhooks{newWebhooks(s, authz, webhookKind{mutating: true, informer: s.inf.MutatingWebhooks, resource: "mutatingwebhookconfigurations"})}
}

// NewValidatingWebhooks returns the validating webhook plugin.
func NewValidatingWebhooks(s *Source, authz authorizer.Authorizer) *ValidatingWebhooks {
	return &ValidatingWebhooks{newWebhooks(s, authz, webhookKind{informer: s.inf.ValidatingWebhooks, resource: "validatingwebhookconfigurations"})}
}

// ForwardTraceContext makes webhook calls carry the trace context of the
// request they are made for, as kube-apiserver's webhook clients do when
// the APIServerTracing feature is enabled (its admission initializer wraps
// their transports with tracing.WrapperFor(tp)). Call it before the first
// request.
func (w *Webhooks) ForwardTraceContext(tp trace.TracerProvider) {
	if !utilfeature.DefaultFeatureGate.Enabled(genericfeatures.APIServerTracing) {
		return
	}
	wrap := tracecontext.Forwarding(tp)
	wrapped := func(c *rest.Config, err error) (*rest.Config, error) {
		if err == nil {
			c.Wrap(wrap)
		}
		return c, err
	}
	w.clientWrapper = func(delegate webhookutil.AuthenticationInfoResolver) webhookutil.AuthenticationInfoResolver {
		return &webhookutil.AuthenticationInfoResolverDelegator{
			ClientConfigForFunc: func(hostPort string) (*rest.Config, error) {
				return wrapped(delegate.ClientConfigFor(hostPort))
			},
			ClientConfigForServiceFunc: func(name, namespace string, port int) (*rest.Config, error) {
				return wrapped(delegate.ClientConfigForService(name, namespace, port))
			},
		}
	}
}

func newWebhooks(s *Source, authz authorizer.Authorizer, kind webhookKind) *Webhooks {
	w := &Webhooks{
		Handler: admission.NewHandler(admission.Connect, admission.Create, admission.Delete, admission.Update),
		source:  s, kind: kind, authz: authz, plugins: map[string]map[string]*clusterPlugin{},
	}
	s.onHookChange(kind.informer, kind.resource, w.changed)
	return w
}

// Admit implements admission.MutationInterface.
func (m *MutatingWebhooks) Admit(ctx context.Context, a admission.Attributes, o admission.ObjectInterfaces) error {
	return m.dispatch(ctx, a, func(p admission.Interface) error {
		return p.(admission.MutationInterface).Admit(ctx, a, o)
	})
}

// Validate implements admission.ValidationInterface.
func (v *ValidatingWebhooks) Validate(ctx context.Context, a admission.Attributes, o admission.ObjectInterfaces) error {
	return v.dispatch(ctx, a, func(p admission.Interface) error {
		return p.(admission.ValidationInterface).Validate(ctx, a, o)
	})
}

// dispatch hands the request to the stock plugin of every cluster whose
// webhooks apply.
func (w *Webhooks) dispatch(ctx context.Context, a admission.Attributes, call func(admission.Interface) error) error {
	cluster, ok := clusters.From(ctx)
	if !ok || cluster == clusters.Wildcard || rules.IsExemptAdmissionConfigurationResource(a) {
		return nil
	}
	if !w.waitForSync(ctx) {
		return admission.NewForbidden(a, fmt.Errorf("not yet ready to handle request"))
	}
	for _, hooks := range w.source.Clusters(cluster, a.GetResource().GroupResource()) {
		p, err := w.pluginFor(ctx, hooks, cluster)
		if err != nil {
			return err
		}
		if p == nil {
			continue
		}
		stampCluster(a, cluster)
		if err := call(p); err != nil {
			return err
		}
	}
	return nil
}

// stampCluster puts the kcp.io/cluster annotation on an object being
// created or updated, as storage will: the webhook sees which cluster the
// object is in (kcp does the same).
func stampCluster(a admission.Attributes, cluster string) {
	if op := a.GetOperation(); (op != admission.Create && op != admission.Update) || a.GetObject() == nil {
		return
	}
	m, err := meta.Accessor(a.GetObject())
	if err != nil {
		return
	}
	ann := m.GetAnnotations()
	if ann[clusters.Annotation] == cluster {
		return
	}
	if ann == nil {
		ann = map[string]string{}
	}
	ann[clusters.Annotation] = cluster
	m.SetAnnotations(ann)
}

func (w *Webhooks) waitForSync(ctx context.Context) bool {
	if w.source.HasSynced() {
		return true
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(context.Context) (bool, error) {
		return w.source.HasSynced(), nil
	}) == nil
}

// pluginFor returns the stock plugin for the webhooks of hooks on
// requests in cluster, or nil if hooks holds none.
func (w *Webhooks) pluginFor(ctx context.Context, hooks, cluster string) (admission.Interface, error) {
	if objs, err := w.source.hookObjects(ctx, w.kind.informer, w.kind.resource, hooks); err != nil || len(objs) == 0 {
		return nil, err
	}
	w.mu.RLock()
	p := w.plugins[hooks][cluster]
	w.mu.RUnlock()
	if p != nil {
		return p.plugin, nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if p := w.plugins[hooks][cluster]; p != nil {
		return p.plugin, nil
	}
	p, err := w.newClusterPlugin(hooks, cluster)
	if err != nil {
		return nil, fmt.Errorf("admission webhooks of cluster %s: %w", hooks, err)
	}
	if w.plugins[hooks] == nil {
		w.plugins[hooks] = map[string]*clusterPlugin{}
	}
	if len(w.plugins[hooks]) >= maxRequestClusters {
		// An export's webhooks serve many consumers: keep a bounded
		// number of their plugins (one is rebuilt when needed again).
		for c := range w.plugins[hooks] {
			if c != hooks {
				delete(w.plugins[hooks], c)
				break
			}
		}
	}
	w.plugins[hooks][cluster] = p
	return p.plugin, nil
}

// newClusterPlugin builds a stock plugin whose configurations are those of
// hooks and whose namespaces are those of cluster.
func (w *Webhooks) newClusterPlugin(hooks, cluster string) (*clusterPlugin, error) {
	namespaces := namespaceLister{s: w.source, cluster: cluster}
	relay := &relayInformer{}
	f := &clusterFactory{namespaces: namespaces, relay: relay,
		mutating: func() []*admissionregistrationv1.MutatingWebhookConfiguration {
			var out []*admissionregistrationv1.MutatingWebhookConfiguration
			for _, c := range sortedByName[*admissionregistrationv1.MutatingWebhookConfiguration](w.configurations(hooks)) {
				out = append(out, defaultedMutating(c))
			}
			return out
		},
		validating: func() []*admissionregistrationv1.ValidatingWebhookConfiguration {
			var out []*admissionregistrationv1.ValidatingWebhookConfiguration
			for _, c := range sortedByName[*admissionregistrationv1.ValidatingWebhookConfiguration](w.configurations(hooks)) {
				out = append(out, defaultedValidating(c))
			}
			return out
		},
	}
	var (
		plugin admission.Interface
		err    error
	)
	client := namespaceClient{namespaces: namespaces}
	if w.kind.mutating {
		var p *mutating.Plugin
		if p, err = mutating.NewMutatingWebhook(nil); err == nil {
			shareConditionCompiler(p.Webhook)
			if w.clientWrapper != nil {
				p.SetAuthenticationInfoResolverWrapper(w.clientWrapper)
			}
			p.SetExternalKubeClientSet(client)
			p.SetAuthorizer(w.authz)
			p.SetExternalKubeInformerFactory(f)
			err = p.ValidateInitialization()
			plugin = p
		}
	} else {
		var p *validating.Plugin
		if p, err = validating.NewValidatingAdmissionWebhook(nil); err == nil {
			shareConditionCompiler(p.Webhook)
			if w.clientWrapper != nil {
				p.SetAuthenticationInfoResolverWrapper(w.clientWrapper)
			}
			p.SetExternalKubeClientSet(client)
			p.SetAuthorizer(w.authz)
			p.SetExternalKubeInformerFactory(f)
			err = p.ValidateInitialization()
			plugin = p
		}
	}
	if err != nil {
		return nil, err
	}
	return &clusterPlugin{plugin: plugin, relay: relay}, nil
}

// configurations lists the configurations of a hook cluster (pluginFor
// saw them readable).
func (w *Webhooks) configurations(hooks string) []any {
	objs, _ := w.source.objects(w.kind.informer, w.kind.resource, hooks)
	return objs
}

// changed passes an event of the wildcard informer on to the plugins of
// the object's cluster, and drops them once the cluster holds no webhook.
func (w *Webhooks) changed(obj any, deleted bool) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return
	}
	hooks := m.GetAnnotations()[clusters.Annotation]
	objs, err := w.source.objects(w.kind.informer, w.kind.resource, hooks)
	w.mu.Lock()
	defer w.mu.Unlock()
	if err == nil && len(objs) == 0 {
		delete(w.plugins, hooks)
		return
	}
	for _, p := range w.plugins[hooks] {
		p.relay.changed(obj, deleted)
	}
}

// Plugins returns how many stock plugins exist (for tests).
func (w *Webhooks) Plugins() int {
	w.mu.RLock()
	defer w.mu.RUnlock()
	n := 0
	for _, m := range w.plugins {
		n += len(m)
	}
	return n
}
