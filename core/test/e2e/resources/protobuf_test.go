package resources

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

const (
	protobuf        = "application/vnd.kubernetes.protobuf"
	protobufOrJSON  = protobuf + ",application/json"
	protobufWatch   = protobuf + ";stream=watch"
	contentTypeJSON = "application/json"
)

// contentTypes records the Content-Type of every response, by method and
// URL path.
type contentTypes struct {
	mu   sync.Mutex
	seen map[string]string
}

func (c *contentTypes) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(req)
		if err == nil {
			key := req.Method + " " + req.URL.Path
			if req.URL.Query().Get("watch") != "" {
				key += "?watch"
			}
			c.mu.Lock()
			c.seen[key] = resp.Header.Get("Content-Type")
			c.mu.Unlock()
		}
		return resp, err
	})
}

func (c *contentTypes) get(t *testing.T, key string) string {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	got, ok := c.seen[key]
	if !ok {
		t.Fatalf("no response recorded for %s; have %v", key, c.seen)
	}
	return got
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestProtobufClient runs client-go configured as kube's own components
// are (protobuf bodies, accepting protobuf then JSON) on configmaps: create,
// get, update, list and a watch are answered in protobuf. kcp's kinds and a
// CRD's custom resources have no protobuf: the same Accept gets JSON.
func TestProtobufClient(t *testing.T) {
	s := server(t)
	cluster, k := s.NewCluster(t, "e2e-protobuf")
	const ns = "pb"
	k.Run(t, "create", "namespace", ns)

	seen := &contentTypes{seen: map[string]string{}}
	cfg := s.RESTConfig(t, cluster)
	cfg.ContentType = protobuf
	cfg.AcceptContentTypes = protobufOrJSON
	cfg.Wrap(seen.wrap)
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	base := "/clusters/" + cluster + "/api/v1/namespaces/" + ns + "/configmaps"

	w, err := cs.CoreV1().ConfigMaps(ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("watching configmaps over protobuf: %v", err)
	}
	defer w.Stop()

	cm, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "pb1"}, Data: map[string]string{"k": "v1"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating a configmap over protobuf: %v", err)
	}
	framework.RequireEqual(t, seen.get(t, "POST "+base), protobuf, "content type of the create's answer")

	got, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "pb1", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("getting the configmap over protobuf: %v", err)
	}
	framework.RequireData(t, got, map[string]string{"k": "v1"}, "configmap read over protobuf")
	framework.RequireEqual(t, seen.get(t, "GET "+base+"/pb1"), protobuf, "content type of the get")

	got.Data["k"] = "v2"
	if _, err := cs.CoreV1().ConfigMaps(ns).Update(ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("updating the configmap over protobuf: %v", err)
	}
	framework.RequireEqual(t, seen.get(t, "PUT "+base+"/pb1"), protobuf, "content type of the update")

	list, err := cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("listing configmaps over protobuf: %v", err)
	}
	names := map[string]string{}
	for _, item := range list.Items {
		names[item.Name] = item.Data["k"]
	}
	framework.RequireEqual(t, names["pb1"], "v2", "pb1 in the protobuf list")
	framework.RequireEqual(t, seen.get(t, "GET "+base), protobuf, "content type of the list")

	// The watch saw the create and the update, decoded from protobuf frames.
	var events []string
	for len(events) < 2 {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("watch closed after %v", events)
			}
			if ev.Type == watch.Error {
				t.Fatalf("watch error: %v", ev.Object)
			}
			c, isCM := ev.Object.(*corev1.ConfigMap)
			if !isCM || c.Name != "pb1" {
				continue
			}
			events = append(events, string(ev.Type)+":"+c.Data["k"])
		case <-ctx.Done():
			t.Fatalf("watch events so far %v: %v", events, ctx.Err())
		}
	}
	framework.RequireEqual(t, strings.Join(events, ","), "ADDED:v1,MODIFIED:v2", "watch events over protobuf")
	framework.RequireEqual(t, seen.get(t, "GET "+base+"?watch"), protobufWatch, "content type of the watch")
	if cm.UID == "" {
		t.Fatalf("created configmap has no UID")
	}

	// kcp's kinds and custom resources fall back to JSON.
	k.RunStdin(t, widgetCRD, "apply", "-f", "-")
	k.WaitForCRD(t, "widgets.e2e.meshplane.io", "widgets", ns)
	for _, path := range []string{
		"/apis/e2e.meshplane.io/v1/namespaces/" + ns + "/widgets",
		"/apis/tenancy.kcp.io/v1alpha1/workspaces",
		"/apis/core.kcp.io/v1alpha1/logicalclusters",
	} {
		res := cs.CoreV1().RESTClient().Get().AbsPath(path).Do(ctx) // under the config's /clusters/<cluster>
		if err := res.Error(); err != nil {
			t.Fatalf("GET %s accepting protobuf or JSON: %v", path, err)
		}
		var ct string
		res.ContentType(&ct)
		framework.RequireEqual(t, ct, contentTypeJSON, "content type of "+path+" for a client accepting protobuf or JSON")
	}

	// Accepting only protobuf: 406 for a kind without protobuf, as kube-apiserver does for CRDs.
	only := rest.CopyConfig(cfg)
	only.AcceptContentTypes = protobuf
	csOnly, err := kubernetes.NewForConfig(only)
	if err != nil {
		t.Fatal(err)
	}
	var code int
	csOnly.CoreV1().RESTClient().Get().AbsPath("/apis/tenancy.kcp.io/v1alpha1/workspaces").Do(ctx).StatusCode(&code)
	framework.RequireEqual(t, code, http.StatusNotAcceptable, "status of a workspace list accepting only protobuf")
}
