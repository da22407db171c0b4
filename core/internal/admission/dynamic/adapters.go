package dynamic

import (
	"context"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	admissionregistrationinformers "k8s.io/client-go/informers/admissionregistration"
	admissionregistrationv1informers "k8s.io/client-go/informers/admissionregistration/v1"
	coreinformers "k8s.io/client-go/informers/core"
	corev1informers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	admissionregistrationlisters "k8s.io/client-go/listers/admissionregistration/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
)

// The stock webhook plugins take their configurations and namespaces
// from a client-go SharedInformerFactory. clusterFactory is one that
// answers only those two questions, for one cluster, from the wildcard
// informers: embedded nil interfaces stand for everything the plugins
// never call.

// clusterFactory is the informer factory of one stock webhook plugin.
type clusterFactory struct {
	informers.SharedInformerFactory

	namespaces corelisters.NamespaceLister
	// configurations lists the hook cluster's configurations, defaulted.
	mutating   func() []*admissionregistrationv1.MutatingWebhookConfiguration
	validating func() []*admissionregistrationv1.ValidatingWebhookConfiguration
	// relay receives the handler the plugin registers; events of the hook
	// cluster are passed on to it.
	relay *relayInformer
}

func (f *clusterFactory) Core() coreinformers.Interface { return coreGroup{f: f} }
func (f *clusterFactory) Admissionregistration() admissionregistrationinformers.Interface {
	return admissionGroup{f: f}
}

type coreGroup struct {
	coreinformers.Interface
	f *clusterFactory
}

func (g coreGroup) V1() corev1informers.Interface { return coreV1{f: g.f} }

type coreV1 struct {
	corev1informers.Interface
	f *clusterFactory
}

func (v coreV1) Namespaces() corev1informers.NamespaceInformer { return namespaceInformer{f: v.f} }

type namespaceInformer struct{ f *clusterFactory }

func (n namespaceInformer) Informer() cache.SharedIndexInformer { return &relayInformer{} }
func (n namespaceInformer) Lister() corelisters.NamespaceLister { return n.f.namespaces }

type admissionGroup struct {
	admissionregistrationinformers.Interface
	f *clusterFactory
}

func (g admissionGroup) V1() admissionregistrationv1informers.Interface { return admissionV1{f: g.f} }

type admissionV1 struct {
	admissionregistrationv1informers.Interface
	f *clusterFactory
}

func (v admissionV1) MutatingWebhookConfigurations() admissionregistrationv1informers.MutatingWebhookConfigurationInformer {
	return mutatingInformer{f: v.f}
}

func (v admissionV1) ValidatingWebhookConfigurations() admissionregistrationv1informers.ValidatingWebhookConfigurationInformer {
	return validatingInformer{f: v.f}
}

type mutatingInformer struct{ f *clusterFactory }

func (m mutatingInformer) Informer() cache.SharedIndexInformer { return m.f.relay }
func (m mutatingInformer) Lister() admissionregistrationlisters.MutatingWebhookConfigurationLister {
	return mutatingLister{f: m.f}
}

type mutatingLister struct {
	admissionregistrationlisters.MutatingWebhookConfigurationLister
	f *clusterFactory
}

func (l mutatingLister) List(selector labels.Selector) ([]*admissionregistrationv1.MutatingWebhookConfiguration, error) {
	return l.f.mutating(), nil
}

type validatingInformer struct{ f *clusterFactory }

func (v validatingInformer) Informer() cache.SharedIndexInformer { return v.f.relay }
func (v validatingInformer) Lister() admissionregistrationlisters.ValidatingWebhookConfigurationLister {
	return validatingLister{f: v.f}
}

type validatingLister struct {
	admissionregistrationlisters.ValidatingWebhookConfigurationLister
	f *clusterFactory
}

func (l validatingLister) List(selector labels.Selector) ([]*admissionregistrationv1.ValidatingWebhookConfiguration, error) {
	return l.f.validating(), nil
}

// relayInformer is the informer a stock plugin registers its handler
// with: it is always synced (the plugin is built from synced wildcard
// informers) and hands events to that handler.
type relayInformer struct {
	cache.SharedIndexInformer
	handler cache.ResourceEventHandler
}

func (r *relayInformer) HasSynced() bool { return true }

func (r *relayInformer) AddEventHandler(h cache.ResourceEventHandler) (cache.ResourceEventHandlerRegistration, error) {
	r.handler = h
	return syncedRegistration{}, nil
}

// changed tells the plugin that obj changed (or went).
func (r *relayInformer) changed(obj any, deleted bool) {
	if r.handler == nil {
		return
	}
	if deleted {
		r.handler.OnDelete(obj)
		return
	}
	r.handler.OnUpdate(obj, obj)
}

type syncedRegistration struct {
	cache.ResourceEventHandlerRegistration
}

func (syncedRegistration) HasSynced() bool { return true }

// namespaceClient is the client the namespace matcher falls back to when
// its lister misses: it asks the same lister (which already asked
// storage), so a miss is a real NotFound.
type namespaceClient struct {
	kubernetes.Interface
	namespaces corelisters.NamespaceLister
}

func (c namespaceClient) CoreV1() corev1client.CoreV1Interface {
	return coreV1Client{namespaces: c.namespaces}
}

type coreV1Client struct {
	corev1client.CoreV1Interface
	namespaces corelisters.NamespaceLister
}

func (c coreV1Client) Namespaces() corev1client.NamespaceInterface {
	return namespaceGetter{namespaces: c.namespaces}
}

type namespaceGetter struct {
	corev1client.NamespaceInterface
	namespaces corelisters.NamespaceLister
}

func (g namespaceGetter) Get(_ context.Context, name string, _ metav1.GetOptions) (*corev1.Namespace, error) {
	if g.namespaces == nil {
		return nil, apierrors.NewNotFound(corev1.Resource("namespaces"), name)
	}
	return g.namespaces.Get(name)
}
