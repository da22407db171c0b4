package apis

// API sharing (apis.kcp.io): apigen, APIExports, APIBindings, endpoint
// slices, the APIExport virtual workspace, permission claims, and a
// multicluster-runtime controller driven through kcp's multicluster-provider.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	apisv1alpha1 "github.com/kcp-dev/sdk/apis/apis/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	mcbuilder "sigs.k8s.io/multicluster-runtime/pkg/builder"
	mccontroller "sigs.k8s.io/multicluster-runtime/pkg/controller"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"
	"sigs.k8s.io/multicluster-runtime/pkg/multicluster"
	mcreconcile "sigs.k8s.io/multicluster-runtime/pkg/reconcile"

	"github.com/kcp-dev/multicluster-provider/apiexport"

	"github.com/meshplane/meshplane/sdk/process"
	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestAPIExportQuickStartCowboys follows kcp's quick start with the real
// kubectl: a provider workspace turns a Cowboy CRD into an APIExport with
// apigen, a consumer workspace binds it and creates a Cowboy, and the
// provider lists it through the endpoint slice's virtual workspace.
func TestAPIExportQuickStartCowboys(t *testing.T) {
	t.Parallel()
	s := server(t)
	org := s.CreateOrg(t, "e2e-quickstart")
	provider := s.CreateWorkspaces(t, org.Path, framework.UniqueName("cowboys-service"))[0]
	pk := s.KubectlFor(provider.Path)

	// apigen: CRD -> APIResourceSchema + APIExport named after the group.
	out := framework.Apigen(t, apisCowboyCRD)
	schemas, _ := filepath.Glob(filepath.Join(out, "apiresourceschema-*.yaml"))
	if len(schemas) != 1 {
		entries, _ := os.ReadDir(out)
		t.Fatalf("apigen: expected one apiresourceschema-*.yaml in %s, got %v (directory: %v)", out, schemas, entries)
	}
	exportFile := filepath.Join(out, "apiexport-wildwest.dev.yaml")
	exportYAML, err := os.ReadFile(exportFile)
	if err != nil {
		t.Fatalf("apigen did not write %s: %v", exportFile, err)
	}
	framework.RequireContains(t, string(exportYAML), "apis.kcp.io/v1alpha2", "the generated APIExport")
	framework.RequireContains(t, string(exportYAML), "cowboys", "the generated APIExport")

	applied := pk.Run(t, "apply", "-f", out)
	framework.RequireContains(t, applied, "apiexport.apis.kcp.io/wildwest.dev created", "kubectl apply of apigen's output in the provider")
	framework.RequireContains(t, applied, "apiresourceschema.apis.kcp.io/", "kubectl apply of apigen's output in the provider")

	framework.Eventually(t, 60*time.Second, 500*time.Millisecond, "the APIExport to get status.identityHash", func() (bool, string) {
		out, stderr, err := pk.RunErr(t, "get", "apiexport", apisCowboyExport, "-o", "jsonpath={.status.identityHash}")
		return err == nil && out != "", out + stderr
	})
	// The default endpoint slice has the export's name and no endpoint while
	// nothing binds the export.
	var slice map[string]any
	framework.Eventually(t, 30*time.Second, 500*time.Millisecond, "the APIExportEndpointSlice "+apisCowboyExport, func() (bool, string) {
		out, stderr, err := pk.RunErr(t, "get", "apiexportendpointslice", apisCowboyExport, "-o", "json")
		if err != nil {
			return false, stderr
		}
		return json.Unmarshal([]byte(out), &slice) == nil, out
	})
	status, _ := slice["status"].(map[string]any)
	if eps, _ := status["endpoints"].([]any); len(eps) != 0 {
		t.Fatalf("the endpoint slice lists endpoints before any workspace binds the export: %s", framework.Compact(status))
	}

	// The consumer binds the export.
	consumer := s.CreateWorkspaces(t, org.Path, "consumer")[0]
	ck := s.KubectlFor(consumer.Path)
	binding := fmt.Sprintf(`apiVersion: apis.kcp.io/v1alpha2
kind: APIBinding
metadata:
  name: cowboys
spec:
  reference:
    export:
      path: %s
      name: %s
`, provider.Path, apisCowboyExport)
	framework.RequireContains(t, ck.RunStdin(t, binding, "apply", "-f", "-"), "apibinding.apis.kcp.io/cowboys created", "kubectl apply of the APIBinding")
	framework.Eventually(t, 60*time.Second, 500*time.Millisecond, "the APIBinding to be Bound", func() (bool, string) {
		out, stderr, err := ck.RunErr(t, "get", "apibinding", "cowboys", "-o", "jsonpath={.status.phase}")
		return err == nil && out == "Bound", out + stderr
	})
	framework.RequireEqual(t, ck.Run(t, "get", "apibinding", "cowboys", "-o", "jsonpath={.status.apiExportClusterName}"), provider.Cluster, "status.apiExportClusterName of the binding")
	framework.RequireEqual(t, ck.Run(t, "get", "apibinding", "cowboys", "-o", "jsonpath={.status.boundResources[*].resource}"), "cowboys", "status.boundResources of the binding")
	framework.Eventually(t, 30*time.Second, 500*time.Millisecond, "cowboys in the consumer's discovery (kubectl api-resources)", func() (bool, string) {
		out, stderr, err := ck.RunErr(t, "api-resources", "--api-group=wildwest.dev")
		return err == nil && strings.Contains(out, "cowboys"), out + stderr
	})

	ck.Run(t, "create", "namespace", "wildwest")
	cowboy := `apiVersion: wildwest.dev/v1alpha1
kind: Cowboy
metadata:
  name: buckaroo-bill
  namespace: wildwest
spec:
  intent: ride
`
	framework.RequireContains(t, ck.RunStdin(t, cowboy, "apply", "-f", "-"), "cowboy.wildwest.dev/buckaroo-bill created", "creating a Cowboy in the consumer")
	framework.RequireEqual(t, strings.TrimSpace(ck.Run(t, "get", "cowboys", "-n", "wildwest", "-o", "name")), "cowboy.wildwest.dev/buckaroo-bill", "cowboys in the consumer")
	ck.Run(t, "patch", "cowboy", "buckaroo-bill", "-n", "wildwest", "--subresource=status", "--type=merge", "-p", `{"status":{"result":"riding"}}`)
	framework.RequireEqual(t, ck.Run(t, "get", "cowboy", "buckaroo-bill", "-n", "wildwest", "-o", "jsonpath={.status.result}"), "riding", "status.result after patching /status in the consumer")

	// The provider sees it through the virtual workspace of the slice.
	var sliceURL string
	framework.Eventually(t, 60*time.Second, 500*time.Millisecond, "the endpoint slice to list the virtual workspace URL", func() (bool, string) {
		out, stderr, err := pk.RunErr(t, "get", "apiexportendpointslice", apisCowboyExport, "-o", "jsonpath={.status.endpoints[*].url}")
		sliceURL = out
		return err == nil && out != "", out + stderr
	})
	framework.RequireEqual(t, strings.TrimPrefix(sliceURL, s.BaseURL), "/services/apiexport/"+provider.Cluster+"/"+apisCowboyExport, "path of the endpoint slice URL (server "+s.BaseURL+")")

	// kcp-admin (context root of admin.kubeconfig), as in the quick start.
	vk := &framework.Kubectl{Kubeconfig: s.Kubeconfig, GlobalArgs: []string{"--context", "root", "--server", sliceURL + "/clusters/*/"}, CacheDir: t.TempDir()}
	var list unstructured.UnstructuredList
	framework.Eventually(t, 30*time.Second, time.Second, "the Cowboy in `kubectl get -A cowboys` through the virtual workspace", func() (bool, string) {
		out, stderr, err := vk.RunErr(t, "get", "-A", "cowboys", "-o", "json")
		if err != nil {
			return false, stderr
		}
		if err := json.Unmarshal([]byte(out), &list); err != nil {
			return false, fmt.Sprintf("decoding %q: %v", out, err)
		}
		return len(list.Items) > 0, out
	})
	keys := apisObjectKeys(list.Items)
	framework.RequireEqual(t, strings.Join(keys, ","), consumer.Cluster+"/wildwest/buckaroo-bill", "cowboys listed through the virtual workspace (<kcp.io/cluster>/<namespace>/<name>)")
	result, _, _ := unstructured.NestedString(list.Items[0].Object, "status", "result")
	framework.RequireEqual(t, result, "riding", "status.result of the Cowboy seen through the virtual workspace")

	// Discovery of the virtual workspace shows the exported resource.
	r := apisRawRequest(t, s, "GET", sliceURL+"/clusters/*/apis/wildwest.dev/v1alpha1", nil)
	framework.RequireCode(t, r, "discovery of wildwest.dev/v1alpha1 through the virtual workspace", 200)
	var resources metav1.APIResourceList
	r.JSON(t, &resources)
	found := false
	for _, res := range resources.APIResources {
		found = found || (res.Name == "cowboys" && res.Namespaced && res.Kind == "Cowboy")
	}
	if !found {
		t.Fatalf("discovery of wildwest.dev/v1alpha1 through the virtual workspace does not list the namespaced resource cowboys (kind Cowboy): %s", r)
	}
	out2, stderr, err := vk.RunErr(t, "api-resources", "--api-group=wildwest.dev")
	if err != nil || !strings.Contains(out2, "cowboys") {
		t.Fatalf("kubectl api-resources through the virtual workspace: want cowboys listed, got err=%v\nstdout:\n%s\nstderr:\n%s", err, out2, stderr)
	}
}

// TestAPIExportIsolationBetweenProviders: two providers export the same
// group and resource; each one's virtual workspace only shows the objects
// of its own consumers, and only reaches into its own consumers.
func TestAPIExportIsolationBetweenProviders(t *testing.T) {
	t.Parallel()
	s := server(t)
	org := s.CreateOrg(t, "e2e-isolation")
	ws := s.CreateWorkspaces(t, org.Path, "provider-1", "provider-2", "consumer-1", "consumer-2")
	p1, p2, c1, c2 := ws[0], ws[1], ws[2], ws[3]
	id1, id2 := s.ExportCRD(t, p1, apisCowboyCRD, apisCowboyExport), s.ExportCRD(t, p2, apisCowboyCRD, apisCowboyExport)
	if id1 == id2 {
		t.Fatalf("two APIExports got the same identity hash %s", id1)
	}
	const ns = "wildwest"
	for _, b := range []struct{ consumer, provider framework.Workspace }{{c1, p1}, {c2, p2}} {
		s.Bind(t, b.consumer, "cowboys", b.provider, apisCowboyExport, nil)
		apisEnsureNamespace(t, s, b.consumer.Path, ns)
		apisWaitServed(t, s, b.consumer, ns)
		apisCreateCowboy(t, s, b.consumer.Path, ns, "cowboy-"+b.consumer.Name)
	}
	u1, u2 := s.EndpointSliceURL(t, p1, apisCowboyExport), s.EndpointSliceURL(t, p2, apisCowboyExport)

	listVW := func(url string) ([]string, error) {
		l, err := framework.DynamicFor(t, s.VirtualWorkspaceRESTConfig(t, url, "*")).Resource(apisCowboyGVR).List(framework.CallContext(t), metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		return apisObjectKeys(l.Items), nil
	}
	for _, c := range []struct {
		url      string
		provider framework.Workspace
		want     string
	}{
		{u1, p1, c1.Cluster + "/" + ns + "/cowboy-consumer-1"},
		{u2, p2, c2.Cluster + "/" + ns + "/cowboy-consumer-2"},
	} {
		framework.Eventually(t, 30*time.Second, 500*time.Millisecond, "the virtual workspace of "+c.provider.Path+" to list exactly "+c.want, func() (bool, string) {
			keys, err := listVW(c.url)
			if err != nil {
				return false, err.Error()
			}
			return strings.Join(keys, ",") == c.want, fmt.Sprintf("listed %v", keys)
		})
	}

	// The shard's wildcard serves each identity separately.
	for _, c := range []struct {
		id       string
		consumer framework.Workspace
	}{{id1, c1}, {id2, c2}} {
		path := "/clusters/*/apis/wildwest.dev/v1alpha1/cowboys:" + c.id
		r := s.AdminRequest(t, "GET", path, nil)
		framework.RequireCode(t, r, "GET "+path, 200)
		var l unstructured.UnstructuredList
		r.JSON(t, &l)
		framework.RequireEqual(t, strings.Join(apisObjectKeys(l.Items), ","), c.consumer.Cluster+"/"+ns+"/cowboy-"+c.consumer.Name,
			"objects on the shard's wildcard under identity "+c.id)
	}

	// A provider cannot reach into the other provider's consumer, whoever
	// asks (kcp-admin, or the shard admin in system:masters).
	for _, caller := range []struct{ name, token string }{{"kcp-admin", s.KCPAdminToken(t)}, {"the shard admin", s.AdminToken(t)}} {
		for _, c := range []struct {
			url   string
			other framework.Workspace
		}{{u1, c2}, {u2, c1}} {
			r := apisRawRequestAs(t, s, caller.token, "GET", c.url+"/clusters/"+c.other.Cluster+"/apis/wildwest.dev/v1alpha1/namespaces/"+ns+"/cowboys/cowboy-"+c.other.Name, nil)
			if r.Err != nil || r.Code != 403 {
				t.Errorf("%s: GET a Cowboy of %s through %s (the virtual workspace of an export it does not bind): want 403, got %s", caller.name, c.other, c.url, r)
			}
		}
	}

	// CRUD in one consumer through the virtual workspace, status included.
	vw := framework.DynamicFor(t, s.VirtualWorkspaceRESTConfig(t, u1, c1.Cluster)).Resource(apisCowboyGVR).Namespace(ns)
	shard := s.Dynamic(t, c1.Path).Resource(apisCowboyGVR).Namespace(ns)
	got, err := vw.Get(framework.CallContext(t), "cowboy-consumer-1", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("GET the consumer's Cowboy through the provider's virtual workspace: %v", err)
	}
	framework.RequireEqual(t, got.GetAnnotations()[framework.ClusterAnnotation], c1.Cluster, "kcp.io/cluster of the Cowboy read through the virtual workspace")
	created, err := vw.Create(framework.CallContext(t), apisCowboy(ns, "made-by-provider", "herd"), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating a Cowboy in %s through the virtual workspace: %v", c1, err)
	}
	if err := unstructured.SetNestedField(created.Object, "herded", "status", "result"); err != nil {
		t.Fatal(err)
	}
	if _, err := vw.UpdateStatus(framework.CallContext(t), created, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("updating the status of a Cowboy in %s through the virtual workspace: %v", c1, err)
	}
	fromShard, err := shard.Get(framework.CallContext(t), "made-by-provider", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the Cowboy created through the virtual workspace is not in %s: %v", c1, err)
	}
	result, _, _ := unstructured.NestedString(fromShard.Object, "status", "result")
	framework.RequireEqual(t, result, "herded", "status.result (set through the virtual workspace) seen in the consumer")
	if err := vw.Delete(framework.CallContext(t), "made-by-provider", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("deleting a Cowboy in %s through the virtual workspace: %v", c1, err)
	}
	framework.Eventually(t, 30*time.Second, 250*time.Millisecond, "the Cowboy deleted through the virtual workspace to be gone from the consumer", func() (bool, string) {
		_, err := shard.Get(framework.CallContext(t), "made-by-provider", metav1.GetOptions{})
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
	// The other consumer's list is untouched by all this.
	l, err := s.Dynamic(t, c2.Path).Resource(apisCowboyGVR).Namespace(ns).List(framework.CallContext(t), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	framework.RequireEqual(t, strings.Join(apisObjectKeys(l.Items), ","), c2.Cluster+"/"+ns+"/cowboy-consumer-2", "cowboys in "+c2.Path)
}

// TestAPIBindingNamingConflict: a consumer with its own CRD of the same
// group and resource gets a binding that is not Bound and says why, and its
// CRD keeps working.
func TestAPIBindingNamingConflict(t *testing.T) {
	t.Parallel()
	s := server(t)
	org := s.CreateOrg(t, "e2e-conflict")
	ws := s.CreateWorkspaces(t, org.Path, "provider", "consumer")
	provider, consumer := ws[0], ws[1]
	identity := s.ExportCRD(t, provider, apisCowboyCRD, apisCowboyExport)

	const ns = "wildwest"
	ck := s.KubectlFor(consumer.Path)
	ck.Run(t, "create", "namespace", ns)
	framework.RequireContains(t, ck.RunStdin(t, apisCowboyCRD, "apply", "-f", "-"), "customresourcedefinition.apiextensions.k8s.io/cowboys.wildwest.dev created", "creating the consumer's own Cowboy CRD")
	ck.WaitForCRD(t, "cowboys.wildwest.dev", "cowboys", ns)
	apisCreateCowboy(t, s, consumer.Path, ns, "local")

	dyn := s.Dynamic(t, consumer.Path)
	if _, err := dyn.Resource(framework.APIBindingGVR).Create(framework.CallContext(t), framework.APIBinding("cowboys", provider.Path, apisCowboyExport, nil), metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating the APIBinding: %v", err)
	}
	var b *unstructured.Unstructured
	conflictCondition := func() (map[string]any, string) {
		var err error
		b, err = dyn.Resource(framework.APIBindingGVR).Get(framework.CallContext(t), "cowboys", metav1.GetOptions{})
		if err != nil {
			return nil, err.Error()
		}
		conds, _, _ := unstructured.NestedSlice(b.Object, "status", "conditions")
		for _, c := range conds {
			if m, _ := c.(map[string]any); m["reason"] == "NamingConflicts" && m["status"] == "False" {
				return m, ""
			}
		}
		return nil, "status: " + framework.Compact(b.Object["status"])
	}
	framework.Eventually(t, 60*time.Second, 500*time.Millisecond, "the APIBinding to report a NamingConflicts condition", func() (bool, string) {
		c, why := conflictCondition()
		return c != nil, why
	})
	c, _ := conflictCondition()
	msg, _ := c["message"].(string)
	framework.RequireContainsFold(t, msg, "cowboys.wildwest.dev", "message of the NamingConflicts condition")
	// It stays that way.
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if c, why := conflictCondition(); c == nil {
			t.Fatalf("the NamingConflicts condition went away: %s", why)
		}
		if phase, _, _ := unstructured.NestedString(b.Object, "status", "phase"); phase == "Bound" {
			t.Fatalf("the conflicting APIBinding became Bound: %s", framework.Compact(b.Object["status"]))
		}
		if bound, _, _ := unstructured.NestedSlice(b.Object, "status", "boundResources"); len(bound) != 0 {
			t.Fatalf("the conflicting APIBinding lists bound resources: %s", framework.Compact(b.Object["status"]))
		}
		time.Sleep(time.Second)
	}

	// The consumer's CRD keeps serving its objects.
	framework.RequireEqual(t, ck.Run(t, "get", "crd", "cowboys.wildwest.dev", "-o", `jsonpath={.status.conditions[?(@.type=="Established")].status}`), "True", "Established condition of the consumer's CRD")
	framework.RequireEqual(t, strings.TrimSpace(ck.Run(t, "get", "cowboys", "-n", ns, "-o", "name")), "cowboy.wildwest.dev/local", "cowboys in the consumer")
	apisCreateCowboy(t, s, consumer.Path, ns, "local-2")
	ck.Run(t, "patch", "cowboy", "local-2", "-n", ns, "--subresource=status", "--type=merge", "-p", `{"status":{"result":"still-mine"}}`)
	framework.RequireEqual(t, ck.Run(t, "get", "cowboy", "local-2", "-n", ns, "-o", "jsonpath={.status.result}"), "still-mine", "status of a Cowboy of the consumer's CRD")
	framework.RequireEqual(t, strings.Join(framework.Names(ck.Run(t, "get", "cowboys", "-n", ns, "-o", "name")), ","), "cowboy.wildwest.dev/local,cowboy.wildwest.dev/local-2", "cowboys in the consumer")
	// None of them is stored under the export's identity (which nothing
	// serves: 404, or an empty list).
	path := "/clusters/*/apis/wildwest.dev/v1alpha1/cowboys:" + identity
	r := s.AdminRequest(t, "GET", path, nil)
	framework.RequireCode(t, r, "GET "+path, 200, 404)
	if r.Code == 200 {
		var l unstructured.UnstructuredList
		r.JSON(t, &l)
		if len(l.Items) != 0 {
			t.Fatalf("objects of the consumer's own CRD show up under the export's identity: %v", apisObjectKeys(l.Items))
		}
	}
}

// TestAPIExportPermissionClaims: a consumer that accepts the export's
// configmaps claim lets the provider at its configmaps through the virtual
// workspace; one that does not gets 403 there.
func TestAPIExportPermissionClaims(t *testing.T) {
	t.Parallel()
	s := server(t)
	org := s.CreateOrg(t, "e2e-claims")
	ws := s.CreateWorkspaces(t, org.Path, "provider", "accepting", "declining")
	provider, accepting, declining := ws[0], ws[1], ws[2]

	pk := s.KubectlFor(provider.Path)
	pk.Run(t, "apply", "-f", framework.Apigen(t, apisCowboyCRD))
	pk.Run(t, "patch", "apiexport", apisCowboyExport, "--type=merge", "-p", `{"spec":{"permissionClaims":[{"group":"","resource":"configmaps","verbs":["*"]}]}}`)
	s.WaitExportIdentity(t, provider, apisCowboyExport)

	accepted := []any{map[string]any{"group": "", "resource": "configmaps", "verbs": []any{"*"}, "selector": map[string]any{"matchAll": true}, "state": "Accepted"}}
	ba := s.Bind(t, accepting, "cowboys", provider, apisCowboyExport, accepted)
	bd := s.Bind(t, declining, "cowboys", provider, apisCowboyExport, nil)
	for _, b := range []*unstructured.Unstructured{ba, bd} {
		claims, _, _ := unstructured.NestedSlice(b.Object, "status", "exportPermissionClaims")
		if !strings.Contains(framework.Compact(claims), `"configmaps"`) {
			t.Fatalf("APIBinding %s: status.exportPermissionClaims should list the export's configmaps claim, status: %s", b.GetAnnotations()[framework.ClusterAnnotation], framework.Compact(b.Object["status"]))
		}
	}

	const ns = "claims"
	for _, c := range []framework.Workspace{accepting, declining} {
		apisEnsureNamespace(t, s, c.Path, ns)
		if _, err := s.Dynamic(t, c.Path).Resource(apisConfigMapGVR).Namespace(ns).Create(framework.CallContext(t), &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "cm-" + c.Name},
			"data":     map[string]any{"owner": c.Name},
		}}, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating a configmap in %s: %v", c, err)
		}
	}
	url := s.EndpointSliceURL(t, provider, apisCowboyExport)

	// Accepted: read, list and write the consumer's configmaps.
	base := url + "/clusters/" + accepting.Cluster + "/api/v1/namespaces/" + ns + "/configmaps"
	r := apisRawRequest(t, s, "GET", base+"/cm-accepting", nil)
	framework.RequireCode(t, r, "GET an accepted consumer's configmap through the virtual workspace", 200)
	var cm unstructured.Unstructured
	r.JSON(t, &cm.Object)
	owner, _, _ := unstructured.NestedString(cm.Object, "data", "owner")
	framework.RequireEqual(t, owner, "accepting", "data.owner of the configmap read through the virtual workspace")
	framework.RequireEqual(t, cm.GetAnnotations()[framework.ClusterAnnotation], accepting.Cluster, "kcp.io/cluster of the configmap read through the virtual workspace")
	r = apisRawRequest(t, s, "GET", base, nil)
	framework.RequireCode(t, r, "LIST an accepted consumer's configmaps through the virtual workspace", 200)
	var l unstructured.UnstructuredList
	r.JSON(t, &l)
	// Every namespace also holds kube-root-ca.crt, as on Kubernetes.
	framework.RequireEqual(t, strings.Replace(strings.Join(apisObjectKeys(l.Items), ","), ","+accepting.Cluster+"/"+ns+"/kube-root-ca.crt", "", 1),
		accepting.Cluster+"/"+ns+"/cm-accepting", "configmaps listed through the virtual workspace (besides kube-root-ca.crt)")
	r = apisRawRequest(t, s, "POST", base, framework.ConfigMapJSON(t, "from-provider", map[string]string{"by": "provider"}))
	framework.RequireCode(t, r, "POST a configmap into an accepted consumer through the virtual workspace", 201)
	framework.RequireData(t, s.KubectlFor(accepting.Path).GetConfigMap(t, ns, "from-provider"), map[string]string{"by": "provider"}, "configmap written through the virtual workspace")

	// Across consumers, the claimed resource lists the accepting consumer's
	// objects only.
	r = apisRawRequest(t, s, "GET", url+"/clusters/*/api/v1/configmaps", nil)
	framework.RequireCode(t, r, "LIST configmaps on the virtual workspace's wildcard", 200)
	l = unstructured.UnstructuredList{}
	r.JSON(t, &l)
	for _, it := range l.Items {
		if c := it.GetAnnotations()[framework.ClusterAnnotation]; c != accepting.Cluster {
			t.Errorf("LIST configmaps on the virtual workspace's wildcard returned %s/%s of %s, which did not accept the claim", it.GetNamespace(), it.GetName(), c)
		}
	}
	if keys := strings.Join(apisObjectKeys(l.Items), ","); !strings.Contains(keys, accepting.Cluster+"/"+ns+"/cm-accepting") {
		t.Errorf("LIST configmaps on the virtual workspace's wildcard does not return the accepting consumer's configmap; got %s", keys)
	}

	// Not accepted: 403 for everything on configmaps, for kcp-admin and for
	// the shard admin (system:masters) alike, while the exported resource
	// itself is reachable.
	base = url + "/clusters/" + declining.Cluster + "/api/v1/namespaces/" + ns + "/configmaps"
	for _, caller := range []struct{ name, token string }{{"kcp-admin", s.KCPAdminToken(t)}, {"the shard admin", s.AdminToken(t)}} {
		for _, req := range []struct {
			method, url string
			body        []byte
		}{
			{"GET", base + "/cm-declining", nil},
			{"GET", base, nil},
			{"POST", base, framework.ConfigMapJSON(t, "from-provider", nil)},
		} {
			r := apisRawRequestAs(t, s, caller.token, req.method, req.url, req.body)
			if r.Err != nil || r.Code != 403 {
				t.Errorf("%s: %s through the virtual workspace into a consumer that did not accept the configmaps claim: want 403, got %s", caller.name, req.method, r)
			}
		}
		r = apisRawRequestAs(t, s, caller.token, "GET", url+"/clusters/"+declining.Cluster+"/apis/wildwest.dev/v1alpha1/cowboys", nil)
		framework.RequireCode(t, r, caller.name+": LIST cowboys of the declining consumer through the virtual workspace", 200)
	}
	if _, err := s.Dynamic(t, declining.Path).Resource(apisConfigMapGVR).Namespace(ns).Get(framework.CallContext(t), "from-provider", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("a refused POST left a configmap in %s: err=%v", declining, err)
	}
}

// apisController is a multicluster-runtime manager with a Cowboy
// controller, fed by kcp's apiexport provider.
type apisController struct {
	provider *apiexport.Provider
	requests *apisRequestLog
	logs     *process.Buffer
	cancel   context.CancelFunc
	done     chan error

	mu         sync.Mutex
	reconciled map[string]int // <cluster>/<namespace>/<name> -> times status.result was set
}

// apisStartController runs a manager whose provider watches the endpoint
// slice of the export in provider, with a controller setting
// status.result=done on every Cowboy. It is stopped when the test ends.
func apisStartController(t *testing.T, s *framework.Server, provider framework.Workspace, slice string) *apisController {
	t.Helper()
	c := &apisController{requests: &apisRequestLog{}, logs: &process.Buffer{}, reconciled: map[string]int{}, done: make(chan error, 1)}
	logger := funcr.New(func(prefix, args string) {
		fmt.Fprintf(c.logs, "%s %s %s\n", time.Now().Format("15:04:05.000"), prefix, args)
	}, funcr.Options{Verbosity: 4})
	ctrllog.SetLogger(logger)
	klog.SetLogger(logger)
	t.Cleanup(klog.ClearLogger)

	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := apisv1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	cfg := s.RESTConfig(t, provider.Path)
	cfg.UserAgent = "meshplane-e2e-multicluster"
	cfg.Wrap(c.requests.wrap)

	p, err := apiexport.New(cfg, slice, apiexport.Options{Scheme: scheme, Log: &logger})
	if err != nil {
		t.Fatalf("apiexport.New: %v", err)
	}
	c.provider = p
	mgr, err := mcmanager.New(cfg, p, manager.Options{
		Scheme:  scheme,
		Logger:  logger,
		Metrics: metricsserver.Options{BindAddress: "0"},
	})
	if err != nil {
		t.Fatalf("mcmanager.New: %v", err)
	}
	cowboy := &unstructured.Unstructured{}
	cowboy.SetGroupVersionKind(apisCowboyGVR.GroupVersion().WithKind("Cowboy"))
	err = mcbuilder.ControllerManagedBy(mgr).
		Named("e2e-cowboys").
		For(cowboy).
		WithOptions(mccontroller.Options{SkipNameValidation: ptr.To(true)}).
		Complete(mcreconcile.Func(func(ctx context.Context, req mcreconcile.Request) (ctrl.Result, error) {
			return c.reconcile(ctx, mgr, req)
		}))
	if err != nil {
		t.Fatalf("building the controller: %v", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	go func() { c.done <- mgr.Start(ctx) }()
	t.Cleanup(func() { c.stop(t) })
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("multicluster controller diagnostics:\n%s", c.diag())
		}
	})
	return c
}

func (c *apisController) reconcile(ctx context.Context, mgr mcmanager.Manager, req mcreconcile.Request) (ctrl.Result, error) {
	cl, err := mgr.GetCluster(ctx, req.ClusterName)
	if err != nil {
		return ctrl.Result{}, err
	}
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(apisCowboyGVR.GroupVersion().WithKind("Cowboy"))
	if err := cl.GetClient().Get(ctx, req.NamespacedName, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	if result, _, _ := unstructured.NestedString(obj.Object, "status", "result"); result == "done" {
		return ctrl.Result{}, nil
	}
	if err := unstructured.SetNestedField(obj.Object, "done", "status", "result"); err != nil {
		return ctrl.Result{}, err
	}
	if err := cl.GetClient().Status().Update(ctx, obj); err != nil {
		return ctrl.Result{}, err
	}
	c.mu.Lock()
	c.reconciled[string(req.ClusterName)+"/"+req.Namespace+"/"+req.Name]++
	c.mu.Unlock()
	return ctrl.Result{}, nil
}

// stop cancels the manager and waits for it to return.
func (c *apisController) stop(t *testing.T) {
	if c.cancel == nil {
		return
	}
	c.cancel()
	c.cancel = nil
	select {
	case err := <-c.done:
		if err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("the multicluster manager returned an error: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Errorf("the multicluster manager did not stop within 30s of canceling its context")
	}
}

func (c *apisController) engaged(cluster string) bool {
	_, err := c.provider.Get(context.Background(), multicluster.ClusterName(cluster))
	return err == nil
}

func (c *apisController) times(cluster, ns, name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reconciled[cluster+"/"+ns+"/"+name]
}

// diag describes what the controller did: failed and recent requests, and
// the tail of its log.
func (c *apisController) diag() string {
	return c.requests.summary(40) + "controller log (last 60 lines):\n" + tail(c.logs.String(), 60)
}

// waitResult waits until the Cowboy in consumer has status.result=done,
// failing with the controller's diagnostics.
func (c *apisController) waitResult(t *testing.T, s *framework.Server, consumer framework.Workspace, ns, name string, timeout time.Duration) {
	t.Helper()
	res := s.Dynamic(t, consumer.Path).Resource(apisCowboyGVR).Namespace(ns)
	deadline := time.Now().Add(timeout)
	var last string
	for {
		got, err := res.Get(framework.CallContext(t), name, metav1.GetOptions{})
		if err == nil {
			result, _, _ := unstructured.NestedString(got.Object, "status", "result")
			if result == "done" {
				t.Logf("Cowboy %s/%s in %s was reconciled", ns, name, consumer)
				return
			}
			last = "status: " + framework.Compact(got.Object["status"])
		} else {
			last = err.Error()
		}
		if time.Now().After(deadline) {
			t.Fatalf("the controller did not set status.result=done on Cowboy %s/%s in %s within %s (engaged: %v); last observation: %s\n%s",
				ns, name, consumer, timeout, c.engaged(consumer.Cluster), last, c.diag())
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// TestMulticlusterControllerCowboys runs a controller built with
// multicluster-runtime and kcp's multicluster-provider (apiexport) against
// an export's endpoint slice: it reconciles Cowboys in every consumer,
// engages a consumer that binds later and disengages one that unbinds.
func TestMulticlusterControllerCowboys(t *testing.T) {
	s := server(t)
	org := s.CreateOrg(t, "e2e-multicluster")
	ws := s.CreateWorkspaces(t, org.Path, "provider", "consumer-1", "consumer-2", "consumer-3")
	provider, consumers := ws[0], ws[1:]
	s.ExportCRD(t, provider, apisCowboyCRD, apisCowboyExport)
	const ns = "wildwest"
	for _, c := range consumers {
		s.Bind(t, c, "cowboys", provider, apisCowboyExport, nil)
		apisEnsureNamespace(t, s, c.Path, ns)
		apisWaitServed(t, s, c, ns)
		apisCreateCowboy(t, s, c.Path, ns, "cowboy")
	}
	sliceURL := s.EndpointSliceURL(t, provider, apisCowboyExport)

	// What the provider engages clusters from: the APIBindings (v1alpha1)
	// of the export's consumers, listed and watched on the virtual
	// workspace's wildcard, each with kcp.io/cluster and Ready=True.
	bindingsURL := sliceURL + "/clusters/*/apis/apis.kcp.io/v1alpha1/apibindings"
	want := make([]string, 0, len(consumers))
	for _, c := range consumers {
		want = append(want, c.Cluster+"//cowboys")
	}
	sort.Strings(want)
	var lastBindings string
	deadline := time.Now().Add(30 * time.Second)
	for {
		r := s.RequestURL(t, s.AdminToken(t), "GET", bindingsURL, "", nil)
		ready := 0
		var keys []string
		if r.Err == nil && r.Code == 200 {
			var l unstructured.UnstructuredList
			r.JSON(t, &l)
			keys = apisObjectKeys(l.Items)
			for i := range l.Items {
				if c, ok := framework.Condition(&l.Items[i], "Ready"); ok && c["status"] == "True" {
					ready++
				}
			}
		}
		lastBindings = fmt.Sprintf("%s (bindings <cluster>//<name>: %v, %d with Ready=True)", r, keys, ready)
		if strings.Join(keys, ",") == strings.Join(want, ",") && ready == len(want) {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("the virtual workspace's wildcard does not list the consumers' APIBindings, which the apiexport provider engages clusters from: want %v, all Ready=True; last answer: %s",
				want, lastBindings)
			break
		}
		time.Sleep(500 * time.Millisecond)
	}

	mc := apisStartController(t, s, provider, apisCowboyExport)
	for _, c := range consumers {
		mc.waitResult(t, s, c, ns, "cowboy", 60*time.Second)
	}

	// A consumer that binds later is engaged and reconciled.
	late := s.CreateWorkspaces(t, org.Path, "consumer-4")[0]
	s.Bind(t, late, "cowboys", provider, apisCowboyExport, nil)
	apisEnsureNamespace(t, s, late.Path, ns)
	apisWaitServed(t, s, late, ns)
	apisCreateCowboy(t, s, late.Path, ns, "latecomer")
	mc.waitResult(t, s, late, ns, "latecomer", 60*time.Second)

	// A consumer that deletes its binding is disengaged.
	gone := consumers[2]
	if !mc.engaged(gone.Cluster) {
		t.Fatalf("%s was reconciled but is not engaged by the provider", gone)
	}
	if err := s.Dynamic(t, gone.Path).Resource(framework.APIBindingGVR).Delete(framework.CallContext(t), "cowboys", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("deleting the APIBinding of %s: %v", gone, err)
	}
	framework.Eventually(t, 30*time.Second, 250*time.Millisecond, "the APIBinding of "+gone.Path+" to be gone", func() (bool, string) {
		_, err := s.Dynamic(t, gone.Path).Resource(framework.APIBindingGVR).Get(framework.CallContext(t), "cowboys", metav1.GetOptions{})
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
	deadline = time.Now().Add(60 * time.Second)
	for mc.engaged(gone.Cluster) {
		if time.Now().After(deadline) {
			t.Fatalf("the provider still engages %s 60s after its APIBinding was deleted\n%s", gone, mc.diag())
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Logf("%s was disengaged", gone)

	// Objects created there afterwards are not reconciled (if the resource
	// can be created at all without the binding), while the remaining
	// consumers still are.
	_, createErr := s.Dynamic(t, gone.Path).Resource(apisCowboyGVR).Namespace(ns).Create(framework.CallContext(t), apisCowboy(ns, "after-unbind", "ride"), metav1.CreateOptions{})
	if createErr != nil {
		t.Logf("creating a Cowboy in %s after deleting its binding fails, the resource is no longer served there: %v", gone, createErr)
	}
	apisCreateCowboy(t, s, consumers[0].Path, ns, "after-unbind")
	mc.waitResult(t, s, consumers[0], ns, "after-unbind", 60*time.Second)
	if createErr == nil {
		time.Sleep(5 * time.Second)
		got, err := s.Dynamic(t, gone.Path).Resource(apisCowboyGVR).Namespace(ns).Get(framework.CallContext(t), "after-unbind", metav1.GetOptions{})
		if err == nil {
			if result, _, _ := unstructured.NestedString(got.Object, "status", "result"); result != "" {
				t.Fatalf("a Cowboy created in %s after it was disengaged got status.result=%q", gone, result)
			}
		}
	}
	if n := mc.times(gone.Cluster, ns, "after-unbind"); n != 0 {
		t.Fatalf("the controller reconciled Cowboy %s/after-unbind in the disengaged %s (%d times)", ns, gone, n)
	}
	for _, c := range append(consumers[:2:2], late) {
		if !mc.engaged(c.Cluster) {
			t.Fatalf("%s is no longer engaged after another consumer unbound\n%s", c, mc.diag())
		}
	}
	mc.stop(t)
}
