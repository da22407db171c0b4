package framework

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// Resources of kcp's APIs the helpers below use.
var (
	WorkspaceGVR      = schema.GroupVersionResource{Group: "tenancy.kcp.io", Version: "v1alpha1", Resource: "workspaces"}
	APIExportGVR      = schema.GroupVersionResource{Group: "apis.kcp.io", Version: "v1alpha2", Resource: "apiexports"}
	APIBindingGVR     = schema.GroupVersionResource{Group: "apis.kcp.io", Version: "v1alpha2", Resource: "apibindings"}
	EndpointSliceGVR  = schema.GroupVersionResource{Group: "apis.kcp.io", Version: "v1alpha1", Resource: "apiexportendpointslices"}
	LogicalClusterGVR = schema.GroupVersionResource{Group: "core.kcp.io", Version: "v1alpha1", Resource: "logicalclusters"}
	WorkspaceTypeGVR  = schema.GroupVersionResource{Group: "tenancy.kcp.io", Version: "v1alpha1", Resource: "workspacetypes"}
	namespaceGVR      = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
)

// Workspace is a workspace: its path (root:org:name) and logical cluster name.
type Workspace struct {
	Name, Path, Cluster string
}

func (w Workspace) String() string { return fmt.Sprintf("%s (logical cluster %s)", w.Path, w.Cluster) }

// CallContext is a context for one API call of a test (30s, cancelled when
// the test ends).
func CallContext(t testing.TB) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// DynamicFor is a dynamic client for cfg.
func DynamicFor(t testing.TB, cfg *rest.Config) dynamic.Interface {
	t.Helper()
	c, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatalf("dynamic client for %s: %v", cfg.Host, err)
	}
	return c
}

// Dynamic is a dynamic client of the shard admin on a logical cluster or
// workspace path.
func (s *Server) Dynamic(t testing.TB, cluster string) dynamic.Interface {
	t.Helper()
	return DynamicFor(t, s.RESTConfig(t, cluster))
}

// CreateWorkspaces creates workspaces (of the parent's default type) under
// parent, a workspace path, and waits until all of them are Ready and
// serve requests. In root the default type is organization, inside an
// organization universal.
func (s *Server) CreateWorkspaces(t testing.TB, parent string, names ...string) []Workspace {
	t.Helper()
	dyn := s.Dynamic(t, parent)
	for _, name := range names {
		ws := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "tenancy.kcp.io/v1alpha1",
			"kind":       "Workspace",
			"metadata":   map[string]any{"name": name},
		}}
		if _, err := dyn.Resource(WorkspaceGVR).Create(CallContext(t), ws, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating workspace %s in %s: %v", name, parent, err)
		}
	}
	out := make([]Workspace, 0, len(names))
	for _, name := range names {
		w := Workspace{Name: name, Path: parent + ":" + name}
		Eventually(t, 2*time.Minute, 250*time.Millisecond, "workspace "+w.Path+" to be Ready", func() (bool, string) {
			got, err := dyn.Resource(WorkspaceGVR).Get(CallContext(t), name, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			phase, _, _ := unstructured.NestedString(got.Object, "status", "phase")
			w.Cluster, _, _ = unstructured.NestedString(got.Object, "spec", "cluster")
			return phase == "Ready" && w.Cluster != "", fmt.Sprintf("status.phase=%q spec.cluster=%q", phase, w.Cluster)
		})
		Eventually(t, 30*time.Second, 250*time.Millisecond, "workspace "+w.Path+" to be reachable", func() (bool, string) {
			_, err := s.Dynamic(t, w.Path).Resource(namespaceGVR).List(CallContext(t), metav1.ListOptions{})
			return err == nil, fmt.Sprint(err)
		})
		t.Logf("workspace %s is Ready", w)
		out = append(out, w)
	}
	return out
}

// CreateOrg creates an organization workspace root:<prefix>-<random> and
// waits until it is Ready.
func (s *Server) CreateOrg(t testing.TB, prefix string) Workspace {
	t.Helper()
	return s.CreateWorkspaces(t, "root", UniqueName(prefix))[0]
}

// WaitWorkspacePhase waits until the Workspace name, read through cfg (a
// config on its parent), is in phase (e.g. "Ready") and returns it.
func WaitWorkspacePhase(t testing.TB, cfg *rest.Config, name, phase string, timeout time.Duration) *tenancyv1alpha1.Workspace {
	t.Helper()
	dyn := DynamicFor(t, cfg)
	ws := &tenancyv1alpha1.Workspace{}
	Eventually(t, timeout, 250*time.Millisecond, fmt.Sprintf("workspace %s in %s to be %s", name, cfg.Host, phase), func() (bool, string) {
		got, err := dyn.Resource(WorkspaceGVR).Get(CallContext(t), name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(got.Object, ws); err != nil {
			return false, fmt.Sprintf("decoding workspace: %v", err)
		}
		return string(ws.Status.Phase) == phase, fmt.Sprintf("status.phase=%q conditions=%s", ws.Status.Phase, Compact(ws.Status.Conditions))
	})
	return ws
}

// WaitExportIdentity waits for status.identityHash of an APIExport and
// returns it.
func (s *Server) WaitExportIdentity(t testing.TB, provider Workspace, export string) string {
	t.Helper()
	var hash string
	Eventually(t, 60*time.Second, 250*time.Millisecond, "APIExport "+export+" in "+provider.Path+" to get status.identityHash", func() (bool, string) {
		got, err := s.Dynamic(t, provider.Path).Resource(APIExportGVR).Get(CallContext(t), export, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		hash, _, _ = unstructured.NestedString(got.Object, "status", "identityHash")
		return hash != "", Compact(got.Object["status"])
	})
	t.Logf("APIExport %s|%s has identity %s", provider.Cluster, export, hash)
	return hash
}

// APIBinding returns an APIBinding (v1alpha2) of export in providerPath;
// claims are spec.permissionClaims (none when nil).
func APIBinding(name, providerPath, export string, claims []any) *unstructured.Unstructured {
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

// Bind creates an APIBinding name in consumer to export of provider and
// waits until it is Bound (see WaitBound).
func (s *Server) Bind(t testing.TB, consumer Workspace, name string, provider Workspace, export string, claims []any) *unstructured.Unstructured {
	t.Helper()
	dyn := s.Dynamic(t, consumer.Path)
	if _, err := dyn.Resource(APIBindingGVR).Create(CallContext(t), APIBinding(name, provider.Path, export, claims), metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating APIBinding %s in %s: %v", name, consumer.Path, err)
	}
	return s.WaitBound(t, consumer, name, provider)
}

// WaitBound waits for an APIBinding to be Bound, and checks that it is bound
// to provider's logical cluster and lists bound resources.
func (s *Server) WaitBound(t testing.TB, consumer Workspace, name string, provider Workspace) *unstructured.Unstructured {
	t.Helper()
	dyn := s.Dynamic(t, consumer.Path)
	var got *unstructured.Unstructured
	Eventually(t, 60*time.Second, 250*time.Millisecond, "APIBinding "+name+" in "+consumer.Path+" to be Bound", func() (bool, string) {
		var err error
		got, err = dyn.Resource(APIBindingGVR).Get(CallContext(t), name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		phase, _, _ := unstructured.NestedString(got.Object, "status", "phase")
		return phase == "Bound", "status: " + Compact(got.Object["status"])
	})
	exportCluster, _, _ := unstructured.NestedString(got.Object, "status", "apiExportClusterName")
	if exportCluster != provider.Cluster {
		t.Fatalf("APIBinding %s in %s: status.apiExportClusterName is %q, want the provider's logical cluster %q; status: %s",
			name, consumer.Path, exportCluster, provider.Cluster, Compact(got.Object["status"]))
	}
	bound, _, _ := unstructured.NestedSlice(got.Object, "status", "boundResources")
	if len(bound) == 0 {
		t.Fatalf("APIBinding %s in %s is Bound but has no status.boundResources; status: %s", name, consumer.Path, Compact(got.Object["status"]))
	}
	t.Logf("APIBinding %s in %s is Bound to %s", name, consumer, provider)
	return got
}

// EndpointSliceURL waits for the APIExportEndpointSlice slice of provider
// to list one endpoint and returns its URL, checked to be
// https://HOST/services/apiexport/<provider cluster>/<slice>.
func (s *Server) EndpointSliceURL(t testing.TB, provider Workspace, slice string) string {
	t.Helper()
	dyn := s.Dynamic(t, provider.Path)
	var url string
	Eventually(t, 60*time.Second, 250*time.Millisecond, "APIExportEndpointSlice "+slice+" in "+provider.Path+" to list an endpoint", func() (bool, string) {
		got, err := dyn.Resource(EndpointSliceGVR).Get(CallContext(t), slice, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		eps, _, _ := unstructured.NestedSlice(got.Object, "status", "endpoints")
		if len(eps) != 1 {
			return false, "status: " + Compact(got.Object["status"])
		}
		url, _ = eps[0].(map[string]any)["url"].(string)
		return url != "", "status: " + Compact(got.Object["status"])
	})
	want := "/services/apiexport/" + provider.Cluster + "/" + slice
	if !strings.HasSuffix(url, want) || !strings.HasPrefix(url, "https://") {
		t.Fatalf("endpoint slice %s in %s: endpoint URL %q, want https://HOST%s", slice, provider.Path, url, want)
	}
	t.Logf("endpoint slice %s in %s: %s", slice, provider.Path, url)
	return url
}

// VirtualWorkspaceConfig is base (credentials and TLS) pointed at
// <vwURL>/clusters/<cluster> of a virtual workspace, e.g. an
// APIExportEndpointSlice URL; cluster "*" is the wildcard.
func VirtualWorkspaceConfig(base *rest.Config, vwURL, cluster string) *rest.Config {
	cfg := rest.CopyConfig(base)
	cfg.Host = strings.TrimSuffix(vwURL, "/") + "/clusters/" + cluster
	return cfg
}

// VirtualWorkspaceRESTConfig is VirtualWorkspaceConfig for the shard admin.
func (s *Server) VirtualWorkspaceRESTConfig(t testing.TB, vwURL, cluster string) *rest.Config {
	t.Helper()
	return VirtualWorkspaceConfig(s.RESTConfig(t, ""), vwURL, cluster)
}

// Compact renders a value as one line of JSON for failure messages.
func Compact(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// Condition returns the condition condType of an object's status.conditions.
func Condition(obj *unstructured.Unstructured, condType string) (map[string]any, bool) {
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == condType {
			return m, true
		}
	}
	return nil, false
}

// CreateWorkspaceOfType creates Workspace name of type typ under parent (a
// workspace path) as the shard admin, without waiting: a type with
// initializers keeps it Initializing (see WaitWorkspacePhase).
func (s *Server) CreateWorkspaceOfType(t testing.TB, parent, name string, typ tenancyv1alpha1.WorkspaceTypeReference) {
	t.Helper()
	ws := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "tenancy.kcp.io/v1alpha1",
		"kind":       "Workspace",
		"metadata":   map[string]any{"name": name},
		"spec":       map[string]any{"type": map[string]any{"name": string(typ.Name), "path": typ.Path}},
	}}
	if _, err := s.Dynamic(t, parent).Resource(WorkspaceGVR).Create(CallContext(t), ws, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating workspace %s of type %s:%s in %s: %v", name, typ.Path, typ.Name, parent, err)
	}
	t.Logf("created workspace %s:%s of type %s:%s", parent, name, typ.Path, typ.Name)
}

// CreateWorkspaceType creates a WorkspaceType in root that extends
// root:universal, with an initializer and/or terminator named
// root:<name>, and waits until its status lists the matching lifecycle
// virtual workspace URLs (see VirtualWorkspaceURL). It is deleted when the
// test ends.
func (s *Server) CreateWorkspaceType(t testing.TB, name string, initializer, terminator bool) *tenancyv1alpha1.WorkspaceType {
	t.Helper()
	wt := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "tenancy.kcp.io/v1alpha1",
		"kind":       "WorkspaceType",
		"metadata":   map[string]any{"name": name},
		"spec": map[string]any{
			"initializer": initializer,
			"terminator":  terminator,
			"extend":      map[string]any{"with": []any{map[string]any{"name": "universal", "path": "root"}}},
		},
	}}
	res := s.Dynamic(t, "root").Resource(WorkspaceTypeGVR)
	if _, err := res.Create(CallContext(t), wt, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating WorkspaceType %s in root: %v", name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := res.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Logf("cleanup: deleting WorkspaceType %s: %v", name, err)
		}
	})
	got := &tenancyv1alpha1.WorkspaceType{}
	Eventually(t, 30*time.Second, 250*time.Millisecond, "WorkspaceType "+name+" to list its virtual workspace URLs", func() (bool, string) {
		u, err := res.Get(CallContext(t), name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, got); err != nil {
			return false, err.Error()
		}
		ok := (!initializer || VirtualWorkspaceURL(got, tenancyv1alpha1.VirtualWorkspaceTypeInitializing) != "") &&
			(!terminator || VirtualWorkspaceURL(got, tenancyv1alpha1.VirtualWorkspaceTypeTerminating) != "")
		return ok, "status.virtualWorkspaces=" + Compact(got.Status.VirtualWorkspaces)
	})
	return got
}

// VirtualWorkspaceURL returns the URL of the lifecycle virtual workspace of
// a WorkspaceType ("" when its status has none of that type).
func VirtualWorkspaceURL(wt *tenancyv1alpha1.WorkspaceType, typ tenancyv1alpha1.VirtualWorkspaceType) string {
	for _, vw := range wt.Status.VirtualWorkspaces {
		if vw.Type == typ {
			return vw.URL
		}
	}
	return ""
}
