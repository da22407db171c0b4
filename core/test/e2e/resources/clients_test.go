package resources

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestClientGoInformer runs a typed shared informer on configmaps of one
// cluster and checks it sees an add, an update and a delete.
func TestClientGoInformer(t *testing.T) {
	s := server(t)
	cluster := framework.UniqueName("e2e-informer")
	cfg := s.RESTConfig(t, cluster)
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const ns = "informer"
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating namespace: %v", err)
	}
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "before"},
		Data:       map[string]string{"v": "0"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating configmap before: %v", err)
	}

	type event struct {
		kind string
		cm   *corev1.ConfigMap
	}
	events := make(chan event, 100)
	send := func(kind string, obj any) {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		if cm, ok := obj.(*corev1.ConfigMap); ok {
			select {
			case events <- event{kind, cm}:
			default:
			}
		}
	}

	factory := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(ns))
	inf := factory.Core().V1().ConfigMaps().Informer()
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { send("add", obj) },
		UpdateFunc: func(_, obj any) { send("update", obj) },
		DeleteFunc: func(obj any) { send("delete", obj) },
	}); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	factory.Start(stop)
	defer func() {
		close(stop)
		factory.Shutdown()
	}()
	syncCtx, syncCancel := context.WithTimeout(ctx, 30*time.Second)
	defer syncCancel()
	if !cache.WaitForCacheSync(syncCtx.Done(), inf.HasSynced) {
		t.Fatalf("the configmap informer on /clusters/%s did not sync within 30s", cluster)
	}

	wait := func(kind, name string, check func(*corev1.ConfigMap) bool) *corev1.ConfigMap {
		t.Helper()
		timeout := time.After(30 * time.Second)
		for {
			select {
			case ev := <-events:
				t.Logf("informer event: %s %s data=%v rv=%s", ev.kind, ev.cm.Name, ev.cm.Data, ev.cm.ResourceVersion)
				if ev.kind == kind && ev.cm.Name == name && (check == nil || check(ev.cm)) {
					return ev.cm
				}
			case <-timeout:
				t.Fatalf("the informer did not report %s of configmap %s within 30s", kind, name)
			}
		}
	}

	before := wait("add", "before", nil)
	framework.RequireEqual(t, before.Annotations[framework.ClusterAnnotation], cluster, "cluster annotation of an informer object")

	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "live"},
		Data:       map[string]string{"v": "1"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating configmap live: %v", err)
	}
	wait("add", "live", func(cm *corev1.ConfigMap) bool { return cm.Data["v"] == "1" })

	live, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "live", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	live.Data["v"] = "2"
	if _, err := cs.CoreV1().ConfigMaps(ns).Update(ctx, live, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("updating configmap live: %v", err)
	}
	wait("update", "live", func(cm *corev1.ConfigMap) bool { return cm.Data["v"] == "2" })

	if err := cs.CoreV1().ConfigMaps(ns).Delete(ctx, "live", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("deleting configmap live: %v", err)
	}
	wait("delete", "live", nil)

	if _, exists, _ := inf.GetStore().GetByKey(ns + "/live"); exists {
		t.Fatalf("the informer cache still holds %s/live after its delete event", ns)
	}
	if _, exists, _ := inf.GetStore().GetByKey(ns + "/before"); !exists {
		t.Fatalf("the informer cache lost %s/before", ns)
	}
}

// TestControllerRuntimeClient uses a controller-runtime client on a cluster.
func TestControllerRuntimeClient(t *testing.T) {
	s := server(t)
	cluster := framework.UniqueName("e2e-crclient")
	c, err := client.New(s.RESTConfig(t, cluster), client.Options{})
	if err != nil {
		t.Fatalf("client.New against /clusters/%s: %v", cluster, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	nsName := "crclient"
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: nsName}}
	if err := c.Create(ctx, ns); err != nil {
		t.Fatalf("creating namespace: %v", err)
	}
	var nsList corev1.NamespaceList
	if err := c.List(ctx, &nsList); err != nil {
		t.Fatalf("listing namespaces: %v", err)
	}
	found := false
	for _, n := range nsList.Items {
		found = found || n.Name == nsName
	}
	if !found {
		t.Fatalf("namespace %s missing from the namespace list", nsName)
	}

	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "cr", Namespace: nsName, Labels: map[string]string{"app": "cr"}},
		Data:       map[string]string{"v": "1"},
	}
	if err := c.Create(ctx, cm); err != nil {
		t.Fatalf("creating configmap: %v", err)
	}
	if cm.UID == "" || cm.ResourceVersion == "" {
		t.Fatalf("Create should fill in uid and resourceVersion, got %+v", cm.ObjectMeta)
	}
	if err := c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "other", Namespace: nsName}}); err != nil {
		t.Fatalf("creating configmap other: %v", err)
	}

	var got corev1.ConfigMap
	if err := c.Get(ctx, client.ObjectKey{Namespace: nsName, Name: "cr"}, &got); err != nil {
		t.Fatalf("getting configmap: %v", err)
	}
	framework.RequireEqual(t, got.Data["v"], "1", "data.v after create")
	framework.RequireEqual(t, got.Annotations[framework.ClusterAnnotation], cluster, "cluster annotation")

	var list corev1.ConfigMapList
	if err := c.List(ctx, &list, client.InNamespace(nsName), client.MatchingLabels{"app": "cr"}); err != nil {
		t.Fatalf("listing configmaps: %v", err)
	}
	if len(list.Items) != 1 || list.Items[0].Name != "cr" {
		t.Fatalf("listing configmaps with app=cr: expected exactly [cr], got %d items %v", len(list.Items), itemNames(list.Items))
	}

	got.Data["v"] = "2"
	if err := c.Update(ctx, &got); err != nil {
		t.Fatalf("updating configmap: %v", err)
	}
	// An update based on the old resourceVersion conflicts.
	cm.Data["v"] = "stale"
	if err := c.Update(ctx, cm); !apierrors.IsConflict(err) {
		t.Fatalf("an update with a stale resourceVersion should be a Conflict, got %v", err)
	}
	var again corev1.ConfigMap
	if err := c.Get(ctx, client.ObjectKey{Namespace: nsName, Name: "cr"}, &again); err != nil {
		t.Fatal(err)
	}
	framework.RequireEqual(t, again.Data["v"], "2", "data.v after update")

	if err := c.Delete(ctx, &again); err != nil {
		t.Fatalf("deleting configmap: %v", err)
	}
	if err := c.Get(ctx, client.ObjectKey{Namespace: nsName, Name: "cr"}, &again); !apierrors.IsNotFound(err) {
		t.Fatalf("getting a deleted configmap should be NotFound, got %v", err)
	}

	if err := c.Delete(ctx, ns); err != nil {
		t.Fatalf("deleting namespace: %v", err)
	}
	framework.Eventually(t, 60*time.Second, time.Second, "namespace "+nsName+" to be gone", func() (bool, string) {
		var n corev1.Namespace
		err := c.Get(ctx, client.ObjectKey{Name: nsName}, &n)
		if apierrors.IsNotFound(err) {
			return true, ""
		}
		return false, fmt.Sprintf("err=%v phase=%s deletionTimestamp=%v", err, n.Status.Phase, n.DeletionTimestamp)
	})
}

func itemNames(items []corev1.ConfigMap) []string {
	var n []string
	for _, i := range items {
		n = append(n, i.Name)
	}
	return n
}
