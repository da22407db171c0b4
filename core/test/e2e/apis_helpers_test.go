package e2e

// Helpers for the API sharing tests (apis_test.go): workspaces, apigen,
// APIExports, APIBindings, endpoint slices and the APIExport virtual
// workspace. Every identifier is prefixed with "apis" so that this file does
// not collide with helpers of other test files in the package.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/meshplane/meshplane/core/test/framework"
)

var (
	apisWorkspaceGVR = schema.GroupVersionResource{Group: "tenancy.kcp.io", Version: "v1alpha1", Resource: "workspaces"}
	apisExportGVR    = schema.GroupVersionResource{Group: "apis.kcp.io", Version: "v1alpha2", Resource: "apiexports"}
	apisBindingGVR   = schema.GroupVersionResource{Group: "apis.kcp.io", Version: "v1alpha2", Resource: "apibindings"}
	apisSliceGVR     = schema.GroupVersionResource{Group: "apis.kcp.io", Version: "v1alpha1", Resource: "apiexportendpointslices"}
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

// apisWS is a workspace: its path (root:org:name) and logical cluster name.
type apisWS struct {
	Name, Path, Cluster string
}

func (w apisWS) String() string { return fmt.Sprintf("%s (logical cluster %s)", w.Path, w.Cluster) }

// apisCtx is a context for one API call.
func apisCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// apisDynamic is a dynamic client of the shard admin on a logical cluster
// or workspace path.
func apisDynamic(t *testing.T, s *framework.Server, cluster string) dynamic.Interface {
	t.Helper()
	return apisDynamicFor(t, s.RESTConfig(t, cluster))
}

func apisDynamicFor(t *testing.T, cfg *rest.Config) dynamic.Interface {
	t.Helper()
	c, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatalf("dynamic client for %s: %v", cfg.Host, err)
	}
	return c
}

// apisVWConfig is a rest.Config of the shard admin on <sliceURL>/clusters/<cluster>.
func apisVWConfig(t *testing.T, s *framework.Server, sliceURL, cluster string) *rest.Config {
	t.Helper()
	cfg := s.RESTConfig(t, "")
	cfg.Host = strings.TrimSuffix(sliceURL, "/") + "/clusters/" + cluster
	return cfg
}

// apisCreateWorkspaces creates workspaces under parent (a path) and waits
// until all of them are Ready and reachable. In root the default type is
// organization, inside an organization universal.
func apisCreateWorkspaces(t *testing.T, s *framework.Server, parent string, names ...string) []apisWS {
	t.Helper()
	dyn := apisDynamic(t, s, parent)
	for _, name := range names {
		ws := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "tenancy.kcp.io/v1alpha1",
			"kind":       "Workspace",
			"metadata":   map[string]any{"name": name},
		}}
		if _, err := dyn.Resource(apisWorkspaceGVR).Create(apisCtx(t), ws, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating workspace %s in %s: %v", name, parent, err)
		}
	}
	out := make([]apisWS, 0, len(names))
	for _, name := range names {
		w := apisWS{Name: name, Path: parent + ":" + name}
		framework.Eventually(t, 2*time.Minute, 250*time.Millisecond, "workspace "+w.Path+" to be Ready", func() (bool, string) {
			got, err := dyn.Resource(apisWorkspaceGVR).Get(apisCtx(t), name, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			phase, _, _ := unstructured.NestedString(got.Object, "status", "phase")
			w.Cluster, _, _ = unstructured.NestedString(got.Object, "spec", "cluster")
			return phase == "Ready" && w.Cluster != "", fmt.Sprintf("status.phase=%q spec.cluster=%q", phase, w.Cluster)
		})
		framework.Eventually(t, 30*time.Second, 250*time.Millisecond, "workspace "+w.Path+" to be reachable", func() (bool, string) {
			_, err := apisDynamic(t, s, w.Path).Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}).List(apisCtx(t), metav1.ListOptions{})
			return err == nil, fmt.Sprint(err)
		})
		t.Logf("workspace %s is Ready", w)
		out = append(out, w)
	}
	return out
}

// apisOrg creates an organization workspace in root for one test.
func apisOrg(t *testing.T, s *framework.Server, prefix string) apisWS {
	t.Helper()
	return apisCreateWorkspaces(t, s, "root", framework.UniqueName(prefix))[0]
}

// apisGenBinary returns the apigen binary: $APIGEN_BIN, else <repo
// root>/bin/apigen, else one built with `go build ./cmd/apigen` (once per
// test process, into a temporary directory that is left behind).
func apisGenBinary(t *testing.T) string {
	t.Helper()
	apisGenOnce.Do(func() {
		if p := os.Getenv("APIGEN_BIN"); p != "" {
			apisGenPath = p
			return
		}
		root, err := framework.RepoRoot()
		if err != nil {
			apisGenErr = err
			return
		}
		def := filepath.Join(root, "bin", "apigen")
		if st, err := os.Stat(def); err == nil && st.Mode()&0o111 != 0 {
			apisGenPath = def
			return
		}
		dir, err := os.MkdirTemp("", "meshplane-e2e-apigen-")
		if err != nil {
			apisGenErr = err
			return
		}
		apisGenPath = filepath.Join(dir, "apigen")
		cmd := exec.Command("go", "build", "-o", apisGenPath, "./cmd/apigen")
		cmd.Dir = filepath.Join(root, "core")
		if out, err := cmd.CombinedOutput(); err != nil {
			apisGenErr = fmt.Errorf("go build ./cmd/apigen: %v\n%s", err, out)
		}
	})
	if apisGenErr != nil {
		t.Fatalf("apigen binary: %v", apisGenErr)
	}
	return apisGenPath
}

var (
	apisGenOnce sync.Once
	apisGenPath string
	apisGenErr  error
)

// apisGenerate writes crdYAML into a directory, runs
// `apigen --input-dir IN --output-dir OUT` and returns OUT.
func apisGenerate(t *testing.T, crdYAML string) string {
	t.Helper()
	in, out := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(in, "crd.yaml"), []byte(crdYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, apisGenBinary(t), "--input-dir", in, "--output-dir", out)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("apigen --input-dir %s --output-dir %s failed: %v\nstdout:\n%s\nstderr:\n%s", in, out, err, stdout.String(), stderr.String())
	}
	entries, _ := os.ReadDir(out)
	var files []string
	for _, e := range entries {
		files = append(files, e.Name())
	}
	t.Logf("apigen wrote %v (stderr: %s)", files, strings.TrimSpace(stderr.String()))
	return out
}

// apisProvide runs apigen on apisCowboyCRD, applies its output in the
// provider workspace with kubectl and waits for the export's identity.
func apisProvide(t *testing.T, s *framework.Server, provider apisWS) string {
	t.Helper()
	out := apisGenerate(t, apisCowboyCRD)
	s.KubectlFor(provider.Path).Run(t, "apply", "-f", out)
	return apisWaitIdentity(t, s, provider, apisCowboyExport)
}

// apisWaitIdentity waits for status.identityHash of an export.
func apisWaitIdentity(t *testing.T, s *framework.Server, provider apisWS, export string) string {
	t.Helper()
	var hash string
	framework.Eventually(t, 60*time.Second, 250*time.Millisecond, "APIExport "+export+" in "+provider.Path+" to get status.identityHash", func() (bool, string) {
		got, err := apisDynamic(t, s, provider.Path).Resource(apisExportGVR).Get(apisCtx(t), export, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		hash, _, _ = unstructured.NestedString(got.Object, "status", "identityHash")
		return hash != "", apisYAMLish(got.Object["status"])
	})
	t.Logf("APIExport %s|%s has identity %s", provider.Cluster, export, hash)
	return hash
}

// apisBinding returns an APIBinding (v1alpha2) of export in providerPath.
func apisBinding(name, providerPath, export string, claims []any) *unstructured.Unstructured {
	spec := map[string]any{"reference": map[string]any{"export": map[string]any{"path": providerPath, "name": export}}}
	if claims != nil {
		spec["permissionClaims"] = claims
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apis.kcp.io/v1alpha2",
		"kind":       "APIBinding",
		"metadata":   map[string]any{"name": name},
		"spec":       spec,
	}}
}

// apisBind creates an APIBinding in consumer and waits until it is Bound.
func apisBind(t *testing.T, s *framework.Server, consumer apisWS, name string, provider apisWS, export string, claims []any) *unstructured.Unstructured {
	t.Helper()
	dyn := apisDynamic(t, s, consumer.Path)
	if _, err := dyn.Resource(apisBindingGVR).Create(apisCtx(t), apisBinding(name, provider.Path, export, claims), metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating APIBinding %s in %s: %v", name, consumer.Path, err)
	}
	return apisWaitBound(t, s, consumer, name, provider)
}

// apisWaitBound waits for an APIBinding to be Bound and checks its status.
func apisWaitBound(t *testing.T, s *framework.Server, consumer apisWS, name string, provider apisWS) *unstructured.Unstructured {
	t.Helper()
	dyn := apisDynamic(t, s, consumer.Path)
	var got *unstructured.Unstructured
	framework.Eventually(t, 60*time.Second, 250*time.Millisecond, "APIBinding "+name+" in "+consumer.Path+" to be Bound", func() (bool, string) {
		var err error
		got, err = dyn.Resource(apisBindingGVR).Get(apisCtx(t), name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		phase, _, _ := unstructured.NestedString(got.Object, "status", "phase")
		return phase == "Bound", "status: " + apisYAMLish(got.Object["status"])
	})
	exportCluster, _, _ := unstructured.NestedString(got.Object, "status", "apiExportClusterName")
	if exportCluster != provider.Cluster {
		t.Fatalf("APIBinding %s in %s: status.apiExportClusterName is %q, want the provider's logical cluster %q; status: %s",
			name, consumer.Path, exportCluster, provider.Cluster, apisYAMLish(got.Object["status"]))
	}
	bound, _, _ := unstructured.NestedSlice(got.Object, "status", "boundResources")
	if len(bound) == 0 {
		t.Fatalf("APIBinding %s in %s is Bound but has no status.boundResources; status: %s", name, consumer.Path, apisYAMLish(got.Object["status"]))
	}
	t.Logf("APIBinding %s in %s is Bound to %s", name, consumer, provider)
	return got
}

// apisWaitServed waits until the consumer serves cowboys (namespace ns must exist).
func apisWaitServed(t *testing.T, s *framework.Server, consumer apisWS, ns string) {
	t.Helper()
	dyn := apisDynamic(t, s, consumer.Path)
	framework.Eventually(t, 30*time.Second, 250*time.Millisecond, "cowboys to be served in "+consumer.Path, func() (bool, string) {
		_, err := dyn.Resource(apisCowboyGVR).Namespace(ns).List(apisCtx(t), metav1.ListOptions{})
		return err == nil, fmt.Sprint(err)
	})
}

// apisSliceURL waits for the endpoint slice of an export to list one
// endpoint and returns its URL.
func apisSliceURL(t *testing.T, s *framework.Server, provider apisWS, slice string) string {
	t.Helper()
	dyn := apisDynamic(t, s, provider.Path)
	var url string
	framework.Eventually(t, 60*time.Second, 250*time.Millisecond, "APIExportEndpointSlice "+slice+" in "+provider.Path+" to list an endpoint", func() (bool, string) {
		got, err := dyn.Resource(apisSliceGVR).Get(apisCtx(t), slice, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		eps, _, _ := unstructured.NestedSlice(got.Object, "status", "endpoints")
		if len(eps) != 1 {
			return false, "status: " + apisYAMLish(got.Object["status"])
		}
		url, _ = eps[0].(map[string]any)["url"].(string)
		return url != "", "status: " + apisYAMLish(got.Object["status"])
	})
	want := "/services/apiexport/" + provider.Cluster + "/" + slice
	if !strings.HasSuffix(url, want) || !strings.HasPrefix(url, "https://") {
		t.Fatalf("endpoint slice %s in %s: endpoint URL %q, want https://HOST%s", slice, provider.Path, url, want)
	}
	t.Logf("endpoint slice %s in %s: %s", slice, provider.Path, url)
	return url
}

// apisEnsureNamespace creates a namespace in a cluster unless it exists.
func apisEnsureNamespace(t *testing.T, s *framework.Server, cluster, ns string) {
	t.Helper()
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}}
	_, err := apisDynamic(t, s, cluster).Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}).Create(apisCtx(t), obj, metav1.CreateOptions{})
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
	got, err := apisDynamic(t, s, cluster).Resource(apisCowboyGVR).Namespace(ns).Create(apisCtx(t), apisCowboy(ns, name, "ride"), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating Cowboy %s/%s in %s: %v", ns, name, cluster, err)
	}
	return got
}

// apisObjectKeys renders list items as <kcp.io/cluster>/<namespace>/<name>, sorted.
func apisObjectKeys(items []unstructured.Unstructured) []string {
	var keys []string
	for _, it := range items {
		keys = append(keys, it.GetAnnotations()[clusterAnnotation]+"/"+it.GetNamespace()+"/"+it.GetName())
	}
	sort.Strings(keys)
	return keys
}

// apisYAMLish renders a value compactly for failure messages.
func apisYAMLish(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// apisCondition returns the condition of an object's status.conditions.
func apisCondition(obj *unstructured.Unstructured, condType string) (map[string]any, bool) {
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == condType {
			return m, true
		}
	}
	return nil, false
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
	r := apisDo(t, s, token, method, url, body)
	t.Logf("%s %s -> %d", method, url, r.Code)
	return r
}

// apisDo sends the request without logging it (for polling).
func apisDo(t *testing.T, s *framework.Server, token, method, url string, body []byte) *framework.Response {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		t.Fatalf("building request %s %s: %v", method, url, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	r := &framework.Response{Method: method, Path: url}
	resp, err := s.HTTPClient(t).Do(req)
	if err != nil {
		r.Err = err
		return r
	}
	defer resp.Body.Close()
	r.Code, r.Header = resp.StatusCode, resp.Header
	r.Body, r.Err = io.ReadAll(resp.Body)
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

// apisSyncBuffer is a goroutine-safe log buffer.
type apisSyncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *apisSyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *apisSyncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// tail returns the last n lines.
func (b *apisSyncBuffer) tail(n int) string {
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	if len(lines) > n {
		lines = append([]string{fmt.Sprintf("... (%d earlier lines)", len(lines)-n)}, lines[len(lines)-n:]...)
	}
	return strings.Join(lines, "\n")
}
