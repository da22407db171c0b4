package apis

// Helpers for the API sharing tests: the Cowboy API of kcp's quick start and
// request logging. Workspaces, apigen, APIExports, APIBindings, endpoint
// slices and virtual workspace configs come from the test kit (framework).

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

var (
	apisCowboyGVR    = schema.GroupVersionResource{Group: "wildwest.dev", Version: "v1alpha1", Resource: "cowboys"}
	apisConfigMapGVR = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
)

// apisCowboyExport is the APIExport apigen makes of apisCowboyCRD: it is
// named after the API group.
const apisCowboyExport = "wildwest.dev"

// apisCowboyCRD is the CRD of kcp's quick start: a namespaced Cowboy in
// group wildwest.dev with a status subresource.
const apisCowboyCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: cowboys.wildwest.dev
spec:
  group: wildwest.dev
  scope: Namespaced
  names:
    plural: cowboys
    singular: cowboy
    kind: Cowboy
    listKind: CowboyList
  versions:
  - name: v1alpha1
    served: true
    storage: true
    subresources:
      status: {}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              intent:
                type: string
          status:
            type: object
            properties:
              result:
                type: string
`

// apisWaitServed waits until the consumer serves cowboys (namespace ns must exist).
func apisWaitServed(t *testing.T, s *framework.Server, consumer framework.Workspace, ns string) {
	t.Helper()
	dyn := s.Dynamic(t, consumer.Path)
	framework.Eventually(t, 30*time.Second, 250*time.Millisecond, "cowboys to be served in "+consumer.Path, func() (bool, string) {
		_, err := dyn.Resource(apisCowboyGVR).Namespace(ns).List(framework.CallContext(t), metav1.ListOptions{})
		return err == nil, fmt.Sprint(err)
	})
}

// apisEnsureNamespace creates a namespace in a cluster unless it exists.
func apisEnsureNamespace(t *testing.T, s *framework.Server, cluster, ns string) {
	t.Helper()
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}}
	_, err := s.Dynamic(t, cluster).Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}).Create(framework.CallContext(t), obj, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("creating namespace %s in %s: %v", ns, cluster, err)
	}
}

// apisCowboy is a Cowboy object.
func apisCowboy(ns, name, intent string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "wildwest.dev/v1alpha1",
		"kind":       "Cowboy",
		"metadata":   map[string]any{"name": name, "namespace": ns},
		"spec":       map[string]any{"intent": intent},
	}}
}

// apisCreateCowboy creates a Cowboy in a cluster through the shard.
func apisCreateCowboy(t *testing.T, s *framework.Server, cluster, ns, name string) *unstructured.Unstructured {
	t.Helper()
	got, err := s.Dynamic(t, cluster).Resource(apisCowboyGVR).Namespace(ns).Create(framework.CallContext(t), apisCowboy(ns, name, "ride"), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating Cowboy %s/%s in %s: %v", ns, name, cluster, err)
	}
	return got
}

// apisObjectKeys renders list items as <kcp.io/cluster>/<namespace>/<name>, sorted.
func apisObjectKeys(items []unstructured.Unstructured) []string {
	var keys []string
	for _, it := range items {
		keys = append(keys, it.GetAnnotations()[framework.ClusterAnnotation]+"/"+it.GetNamespace()+"/"+it.GetName())
	}
	sort.Strings(keys)
	return keys
}

// apisRawRequest sends a request with the shard admin's token to a full
// URL (e.g. under a virtual workspace).
func apisRawRequest(t *testing.T, s *framework.Server, method, url string, body []byte) *framework.Response {
	t.Helper()
	return apisRawRequestAs(t, s, s.AdminToken(t), method, url, body)
}

// apisRawRequestAs is apisRawRequest with a bearer token.
func apisRawRequestAs(t *testing.T, s *framework.Server, token, method, url string, body []byte) *framework.Response {
	t.Helper()
	r := s.RequestURL(t, token, method, url, "", body)
	t.Logf("%s %s -> %d", method, url, r.Code)
	return r
}

// apisRequestLog is an http.RoundTripper recording every request a client
// makes and the response code (with the body of failed responses).
type apisRequestLog struct {
	mu      sync.Mutex
	entries []string
	failed  []string
}

func (l *apisRequestLog) wrap(rt http.RoundTripper) http.RoundTripper {
	return &apisRequestLogRT{log: l, next: rt}
}

type apisRequestLogRT struct {
	log  *apisRequestLog
	next http.RoundTripper
}

func (rt *apisRequestLogRT) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := rt.next.RoundTrip(req)
	line := fmt.Sprintf("%s %s %s", time.Now().Format("15:04:05.000"), req.Method, req.URL.String())
	switch {
	case err != nil:
		line += " -> error: " + err.Error()
		rt.log.add(line, true)
	case resp.StatusCode >= 400:
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 2048))
		resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(body))
		line += fmt.Sprintf(" -> %d %s", resp.StatusCode, strings.TrimSpace(string(body)))
		rt.log.add(line, true)
	default:
		line += fmt.Sprintf(" -> %d", resp.StatusCode)
		rt.log.add(line, false)
	}
	return resp, err
}

func (l *apisRequestLog) add(line string, failed bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.entries = append(l.entries, line)
	if failed {
		l.failed = append(l.failed, line)
	}
}

// summary lists the failed requests and the last n requests.
func (l *apisRequestLog) summary(n int) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var b strings.Builder
	failed := l.failed
	if len(failed) > 50 {
		fmt.Fprintf(&b, "failed requests (%d, first 25 and last 25):\n", len(failed))
		failed = append(append([]string{}, failed[:25]...), failed[len(failed)-25:]...)
	} else {
		fmt.Fprintf(&b, "failed requests (%d):\n", len(failed))
	}
	for _, f := range failed {
		b.WriteString("  " + f + "\n")
	}
	last := l.entries
	if len(last) > n {
		last = last[len(last)-n:]
	}
	fmt.Fprintf(&b, "last %d of %d requests:\n", len(last), len(l.entries))
	for _, e := range last {
		b.WriteString("  " + e + "\n")
	}
	return b.String()
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = append([]string{fmt.Sprintf("... (%d earlier lines)", len(lines)-n)}, lines[len(lines)-n:]...)
	}
	return strings.Join(lines, "\n")
}
