package kubecluster

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"github.com/meshplane/meshplane/sdk/egress"
)

// Targets receives the APIs of Ready KubeClusters (the proxy).
type Targets interface {
	Set(name, cluster string, cfg *rest.Config) error
	Remove(name string)
}

// Controller reconciles the KubeClusters of one workspace. Steps, in
// order: mark the object as a mount (annotation), read the kubeconfig
// Secret, check the target API (GET /api), hand it to the proxy, and
// report status.URL and status.phase. Ready KubeClusters are checked
// again every Recheck, so the phase follows the target.
type Controller struct {
	client   dynamic.ResourceInterface
	secrets  kubernetes.Interface
	targets  Targets
	proxyURL string
	recheck  time.Duration
	// allow says where targets may be: a kubeconfig Secret is written by
	// whoever may write Secrets in the workspace.
	allow *egress.AllowList

	informer cache.SharedIndexInformer
	queue    workqueue.TypedRateLimitingInterface[string]
}

// New returns the controller for the workspace cfg points at; proxyURL is
// the proxy's external base URL; allow says where targets may be (nil:
// nowhere).
func New(cfg *rest.Config, targets Targets, proxyURL string, recheck time.Duration, allow *egress.AllowList) (*Controller, error) {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	secrets, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	c := &Controller{client: dyn.Resource(Resource), secrets: secrets, targets: targets, proxyURL: proxyURL, recheck: recheck, allow: allow,
		queue: workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())}
	c.informer = cache.NewSharedIndexInformer(&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return c.client.List(ctx, o) },
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return c.client.Watch(ctx, o)
		},
	}, &unstructured.Unstructured{}, 0, cache.Indexers{})
	enqueue := func(obj any) {
		if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
			c.queue.Add(key)
		}
	}
	_, _ = c.informer.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: enqueue, UpdateFunc: func(_, o any) { enqueue(o) }, DeleteFunc: enqueue})
	return c, nil
}

// Run works until ctx is done.
func (c *Controller) Run(ctx context.Context) error {
	defer c.queue.ShutDown()
	go c.informer.RunWithContext(ctx)
	if !cache.WaitForCacheSync(ctx.Done(), c.informer.HasSynced) {
		return fmt.Errorf("KubeClusters did not sync")
	}
	klog.InfoS("Watching KubeClusters")
	go wait.UntilWithContext(ctx, func(ctx context.Context) {
		for c.next(ctx) {
		}
	}, time.Second)
	<-ctx.Done()
	return nil
}

// HasSynced reports whether the KubeClusters have been listed.
func (c *Controller) HasSynced() bool { return c.informer.HasSynced() }

func (c *Controller) next(ctx context.Context) bool {
	key, quit := c.queue.Get()
	if quit {
		return false
	}
	defer c.queue.Done(key)
	requeue, err := c.reconcile(ctx, key)
	switch {
	case err != nil:
		klog.ErrorS(err, "Reconciling", "kubecluster", key)
		c.queue.AddRateLimited(key)
	case requeue > 0:
		c.queue.Forget(key)
		c.queue.AddAfter(key, requeue)
	default:
		c.queue.Forget(key)
	}
	return true
}

func (c *Controller) reconcile(ctx context.Context, name string) (time.Duration, error) {
	obj, exists, err := c.informer.GetStore().GetByKey(name)
	if err != nil {
		return 0, err
	}
	if !exists {
		c.targets.Remove(name)
		return 0, nil
	}
	u := obj.(*unstructured.Unstructured)
	if u.GetAnnotations()[IsMountAnnotation] != "true" {
		patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:"true"}}}`, IsMountAnnotation)
		_, err := c.client.Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
		return 0, err
	}
	kc := &KubeCluster{Name: name}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, kc); err != nil {
		return 0, c.setStatus(ctx, u, Status{Phase: PhaseConnecting, Message: "reading the KubeCluster: " + err.Error()})
	}
	if kc.Status.Phase == "" {
		// Say first that the mount is being set up.
		return 0, c.setStatus(ctx, u, Status{Phase: PhaseInitializing, Message: "reading the target's kubeconfig"})
	}
	cfg, err := c.targetConfig(ctx, kc)
	if err == nil {
		err = check(ctx, cfg)
	}
	if err == nil {
		err = c.targets.Set(name, u.GetAnnotations()[ClusterAnnotation], cfg)
	}
	if err != nil {
		c.targets.Remove(name)
		return c.recheck, c.setStatus(ctx, u, Status{Phase: PhaseConnecting, Message: err.Error()})
	}
	return c.recheck, c.setStatus(ctx, u, Status{Phase: PhaseReady, URL: c.proxyURL + "/kubeclusters/" + name, Message: "connected to " + cfg.Host})
}

// targetConfig reads the kubeconfig Secret of kc.
func (c *Controller) targetConfig(ctx context.Context, kc *KubeCluster) (*rest.Config, error) {
	ref := kc.Spec.SecretRef
	s, err := c.secrets.CoreV1().Secrets(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("secret %s/%s: %w", ref.Namespace, ref.Name, err)
	}
	data, ok := s.Data[KubeconfigKey]
	if !ok {
		return nil, fmt.Errorf("secret %s/%s has no key %q", ref.Namespace, ref.Name, KubeconfigKey)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(data)
	if err != nil {
		return nil, fmt.Errorf("secret %s/%s: kubeconfig: %w", ref.Namespace, ref.Name, err)
	}
	// Connections go only where --target-allowed-hosts allows, never
	// through a proxy (the kubeconfig's proxy-url or the environment's).
	cfg.Dial = c.allow.DialContext
	cfg.Proxy = func(*http.Request) (*url.URL, error) { return nil, nil }
	return cfg, nil
}

// check asks the target for its core API group with the target's
// credentials.
func check(ctx context.Context, cfg *rest.Config) error {
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := client.Discovery().RESTClient().Get().AbsPath("/api").DoRaw(ctx); err != nil {
		// One message whatever went wrong (not allowed, closed port, not
		// a Kubernetes API, refused credentials): the status must not map
		// the network for whoever wrote the kubeconfig.
		klog.V(2).InfoS("Target check failed", "host", cfg.Host, "err", err)
		return fmt.Errorf("target %s: %s", cfg.Host, targetUnreachable)
	}
	return nil
}

// targetUnreachable is the one status message of a target that did not
// answer.
const targetUnreachable = "no answer to GET /api with the kubeconfig's credentials (the proxy's log says why)"

// setStatus writes status when it differs from the object's.
func (c *Controller) setStatus(ctx context.Context, u *unstructured.Unstructured, s Status) error {
	var old Status
	if raw, ok := u.Object["status"]; ok {
		b, _ := json.Marshal(raw)
		_ = json.Unmarshal(b, &old)
	}
	if old == s {
		return nil
	}
	b, _ := json.Marshal(s)
	var status map[string]any
	_ = json.Unmarshal(b, &status)
	u = u.DeepCopy()
	u.Object["status"] = status
	_, err := c.client.UpdateStatus(ctx, u, metav1.UpdateOptions{})
	if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
		return nil // a newer version is on its way through the watch
	}
	if err == nil {
		klog.InfoS("KubeCluster status", "kubecluster", u.GetName(), "phase", s.Phase, "url", s.URL, "message", s.Message)
	}
	return err
}
