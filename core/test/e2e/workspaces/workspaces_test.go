package workspaces

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// requireCurrentWorkspace checks the plugin's message and the kubeconfig.
func requireCurrentWorkspace(t *testing.T, k *framework.Kubectl, out, path, what string) {
	t.Helper()
	framework.RequireContains(t, out, fmt.Sprintf("Current workspace is %q", path), what)
	if got := k.CurrentWorkspace(t); got != path {
		t.Fatalf("%s: the kubeconfig's current context points at workspace %q (server %s), want %q", what, got, k.CurrentServer(t), path)
	}
}

// treeChildren parses `kubectl ws tree` output and returns the names printed
// directly below the line naming parent.
func treeChildren(t *testing.T, tree, parent string) []string {
	t.Helper()
	lines := strings.Split(strings.TrimRight(tree, "\n"), "\n")
	// the indentation in runes: "│" is one column but three bytes
	depth := func(l string) int {
		i := strings.Index(l, "── ")
		if i < 0 {
			return -1
		}
		return utf8.RuneCountInString(l[:i])
	}
	name := func(l string) string {
		i := strings.Index(l, "── ")
		if i < 0 {
			return ""
		}
		return strings.TrimSpace(l[i+len("── "):])
	}
	for i, l := range lines {
		if name(l) != parent {
			continue
		}
		var children []string
		d := depth(l)
		for _, c := range lines[i+1:] {
			cd := depth(c)
			if cd <= d {
				break
			}
			if cd == d+4 {
				children = append(children, name(c))
			}
		}
		return children
	}
	t.Fatalf("`kubectl ws tree` output has no line for %q:\n%s", parent, tree)
	return nil
}

// TestWorkspaceQuickStart follows kcp's quick start with the real kubectl
// and the kubectl-ws plugin, on a copy of admin.kubeconfig (context root).
func TestWorkspaceQuickStart(t *testing.T) {
	t.Parallel()
	s := server(t)
	k := s.WorkspaceKubectl(t, "root")
	org := framework.UniqueName("e2e-qs")
	t.Logf("organization workspace root:%s", org)
	t.Cleanup(func() {
		if _, _, err := s.KubectlFor("root").RunErr(t, "delete", "workspace", org, "--wait=false"); err != nil {
			t.Logf("cleanup: deleting workspace %s: %v", org, err)
		}
	})

	requireCurrentWorkspace(t, k, k.WS(t, "."), "root", "kubectl ws . on a fresh copy of admin.kubeconfig")

	out := k.WS(t, "create", org, "--enter")
	framework.RequireContains(t, out, fmt.Sprintf("Workspace %q (type root:organization)", org), "kubectl ws create --enter in root (default type)")
	framework.RequireContains(t, out, "is ready to use", "kubectl ws create --enter")
	requireCurrentWorkspace(t, k, out, "root:"+org, "kubectl ws create --enter")

	out = k.WS(t, "create", "b")
	framework.RequireContains(t, out, `Workspace "b" (type root:universal)`, "kubectl ws create b inside an organization (default type)")
	framework.RequireContains(t, out, "is ready to use", "kubectl ws create b")
	if got := k.CurrentWorkspace(t); got != "root:"+org {
		t.Fatalf("kubectl ws create without --enter changed the current workspace to %q", got)
	}

	out = k.Run(t, "get", "workspaces")
	rows := framework.Table(out)
	if want := []string{"NAME", "TYPE", "PHASE", "URL", "AGE"}; len(rows) == 0 || !slices.Equal(rows[0], want) {
		t.Fatalf("kubectl get workspaces: expected columns %v, got:\n%s", want, out)
	}
	_, cell := framework.TableRow(t, out, "b")
	framework.RequireEqual(t, cell("TYPE"), "root:universal", "TYPE of workspace b in kubectl get workspaces")
	framework.RequireEqual(t, cell("PHASE"), "Ready", "PHASE of workspace b in kubectl get workspaces")
	framework.RequireEqual(t, cell("URL"), s.ClusterURL("root:"+org+":b"), "URL of workspace b in kubectl get workspaces")
	framework.RequireEqual(t, len(rows), 2, fmt.Sprintf("number of rows in kubectl get workspaces in root:%s (header + b):\n%s", org, out))
	framework.RequireContains(t, k.Run(t, "get", "ws", "b", "-o", "name"), "workspace.tenancy.kcp.io/b", "kubectl get ws (short name)")

	requireCurrentWorkspace(t, k, k.WS(t, "b"), "root:"+org+":b", "kubectl ws b")
	framework.RequireContains(t, k.WS(t, "."), fmt.Sprintf("%q", "root:"+org+":b"), "kubectl ws . in b")
	requireCurrentWorkspace(t, k, k.WS(t, ".."), "root:"+org, "kubectl ws ..")
	requireCurrentWorkspace(t, k, k.WS(t, "-"), "root:"+org+":b", "kubectl ws - (back to the previous workspace)")
	// the universal initializer made the namespaces every workspace has
	framework.RequireEqual(t, strings.Join(framework.Names(k.Run(t, "get", "namespaces", "-o", "name")), " "), "namespace/default namespace/kube-system",
		"namespaces in a new universal workspace (kubectl get namespaces in root:"+org+":b)")
	k.Run(t, "create", "configmap", "hello", "-n", "default", "--from-literal=where=b")

	requireCurrentWorkspace(t, k, k.WS(t, "root"), "root", "kubectl ws root")
	requireCurrentWorkspace(t, k, k.WS(t, "use", "root:"+org+":b"), "root:"+org+":b", "kubectl ws use root:<org>:b (root:... is absolute)")
	requireCurrentWorkspace(t, k, k.WS(t, ":root"), "root", "kubectl ws :root")

	out = k.Run(t, "get", "workspacetypes", "-o", "name")
	for _, wt := range builtinWorkspaceTypes {
		framework.RequireContains(t, out, "workspacetype.tenancy.kcp.io/"+wt+"\n", "kubectl get workspacetypes in root")
	}

	tree := k.WS(t, "tree")
	framework.RequireContains(t, tree, "── root\n", "kubectl ws tree in root")
	if children := treeChildren(t, tree, "root"); !slices.Contains(children, org) {
		t.Fatalf("kubectl ws tree in root: %s is not shown below root (children %v):\n%s", org, children, tree)
	}
	if children := treeChildren(t, tree, org); !slices.Equal(children, []string{"b"}) {
		t.Fatalf("kubectl ws tree in root: expected exactly b below %s, got %v:\n%s", org, children, tree)
	}

	// the content is where the plugin says it is
	framework.RequireData(t, s.KubectlFor("root:"+org+":b").GetConfigMap(t, "default", "hello"), map[string]string{"where": "b"}, "configmap created after kubectl ws b")
}

// TestWorkspaceAPI checks the objects behind a workspace: the Workspace in
// the parent, the LogicalCluster inside, the two ways to address a cluster,
// the creator's admin binding, and deletion of a subtree.
func TestWorkspaceAPI(t *testing.T) {
	t.Parallel()
	s := server(t)
	root := adminClient(t, s, "root")
	org := framework.UniqueName("e2e-wsapi")
	createWorkspace(t, root, org, "")
	deleteWorkspaceLater(t, root, org)
	orgWS := waitWorkspacePhase(t, root, org, corev1alpha1.LogicalClusterPhaseReady, 90*time.Second)
	if orgWS.Spec.Type == nil || orgWS.Spec.Type.Name != "organization" || orgWS.Spec.Type.Path != "root" {
		t.Fatalf("a workspace created in root without a type should get type root:organization: %s", describeWorkspace(orgWS))
	}
	framework.RequireEqual(t, orgWS.Spec.URL, s.ClusterURL("root:"+org), "spec.URL of "+org)
	if orgWS.Spec.Cluster == "" {
		t.Fatalf("spec.cluster of a Ready workspace is empty: %s", describeWorkspace(orgWS))
	}

	orgClient := adminClient(t, s, "root:"+org)
	createWorkspace(t, orgClient, "child", "")
	child := waitWorkspacePhase(t, orgClient, "child", corev1alpha1.LogicalClusterPhaseReady, 90*time.Second)
	if child.Spec.Type == nil || child.Spec.Type.Name != "universal" {
		t.Fatalf("a workspace created in an organization without a type should get type root:universal: %s", describeWorkspace(child))
	}
	childPath := "root:" + org + ":child"
	framework.RequireEqual(t, child.Spec.URL, s.ClusterURL(childPath), "spec.URL of child")

	t.Run("logicalcluster", func(t *testing.T) {
		ctx := testContext(t, time.Minute)
		byPath, byName := &corev1alpha1.LogicalCluster{}, &corev1alpha1.LogicalCluster{}
		if err := adminClient(t, s, childPath).Get(ctx, client.ObjectKey{Name: "cluster"}, byPath); err != nil {
			t.Fatalf("GET /clusters/%s/apis/core.kcp.io/v1alpha1/logicalclusters/cluster: %v", childPath, err)
		}
		if err := adminClient(t, s, child.Spec.Cluster).Get(ctx, client.ObjectKey{Name: "cluster"}, byName); err != nil {
			t.Fatalf("GET /clusters/%s/apis/core.kcp.io/v1alpha1/logicalclusters/cluster (the workspace's spec.cluster): %v", child.Spec.Cluster, err)
		}
		if byPath.UID != byName.UID {
			t.Fatalf("/clusters/%s and /clusters/%s should reach the same cluster, but their LogicalClusters differ:\n%s (uid %s)\n%s (uid %s)",
				childPath, child.Spec.Cluster, describeLogicalCluster(byPath), byPath.UID, describeLogicalCluster(byName), byName.UID)
		}
		framework.RequireEqual(t, byPath.Annotations[framework.PathAnnotation], childPath, "annotation "+framework.PathAnnotation+" of the LogicalCluster")
		framework.RequireEqual(t, byPath.Annotations[typeAnnotation], "root:universal", "annotation "+typeAnnotation+" of the LogicalCluster")
		framework.RequireEqual(t, byPath.Annotations[framework.ClusterAnnotation], child.Spec.Cluster, "annotation "+framework.ClusterAnnotation+" of the LogicalCluster")
		framework.RequireEqual(t, byPath.Status.Phase, corev1alpha1.LogicalClusterPhaseReady, "status.phase of the LogicalCluster: "+describeLogicalCluster(byPath))
		if len(byPath.Status.Initializers) != 0 {
			t.Fatalf("a Ready cluster has initializers left: %s", describeLogicalCluster(byPath))
		}
		if o := byPath.Spec.Owner; o == nil || o.Name != "child" || o.Resource != "workspaces" || o.Cluster != orgWS.Spec.Cluster {
			t.Fatalf("spec.owner of the LogicalCluster should name workspace child in cluster %s, got %+v", orgWS.Spec.Cluster, o)
		}
		if byPath.Spec.CreatedBy == nil || byPath.Spec.CreatedBy.Username != "kcp-admin" {
			t.Fatalf("spec.createdBy of the LogicalCluster should be kcp-admin, got %+v", byPath.Spec.CreatedBy)
		}

		// the creator is admin inside
		crb := &rbacv1.ClusterRoleBinding{}
		if err := adminClient(t, s, childPath).Get(ctx, client.ObjectKey{Name: "workspace-admin"}, crb); err != nil {
			t.Fatalf("getting ClusterRoleBinding workspace-admin in %s: %v", childPath, err)
		}
		if crb.RoleRef.Name != "cluster-admin" || !slices.ContainsFunc(crb.Subjects, func(s rbacv1.Subject) bool { return s.Kind == "User" && s.Name == "kcp-admin" }) {
			t.Fatalf("ClusterRoleBinding workspace-admin in %s should bind kcp-admin to cluster-admin, got roleRef %+v subjects %+v", childPath, crb.RoleRef, crb.Subjects)
		}
	})

	t.Run("unknown path", func(t *testing.T) {
		for _, p := range []string{"root:" + org + ":nope", "root:" + framework.UniqueName("e2e-nope") + ":x"} {
			r := s.Request(t, s.KCPAdminToken(t), http.MethodGet, "/clusters/"+p+"/api/v1/namespaces", nil)
			framework.RequireStatus(t, r, "GET /clusters/"+p+"/api/v1/namespaces (unknown workspace path)", http.StatusNotFound, "")
		}
	})

	t.Run("delete subtree", func(t *testing.T) {
		ctx := testContext(t, time.Minute)
		if err := adminClient(t, s, childPath).Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "doomed", Namespace: "default"}, Data: map[string]string{"a": "b"},
		}); err != nil {
			t.Fatalf("creating a configmap in %s: %v", childPath, err)
		}
		if err := root.Delete(ctx, &tenancyv1alpha1.Workspace{ObjectMeta: metav1.ObjectMeta{Name: org}}); err != nil {
			t.Fatalf("deleting workspace %s: %v", org, err)
		}
		waitWorkspaceGone(t, root, org, 2*time.Minute)
		for _, p := range []string{"root:" + org, childPath} {
			r := s.Request(t, s.KCPAdminToken(t), http.MethodGet, "/clusters/"+p+"/api/v1/namespaces/default/configmaps", nil)
			if r.Code != http.StatusNotFound {
				t.Fatalf("after deleting %s, workspace path %s should be unknown (404), got %s", org, p, r)
			}
		}
		// logical cluster names are always addressable, but the content is gone
		for _, what := range []string{"/api/v1/namespaces/default/configmaps/doomed", "/api/v1/namespaces/default", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/workspace-admin"} {
			r := s.AdminRequest(t, http.MethodGet, "/clusters/"+child.Spec.Cluster+what, nil)
			if r.Code != http.StatusNotFound {
				t.Fatalf("after deleting %s, the content of its child's logical cluster %s should be purged: GET %s should be 404, got %s", org, child.Spec.Cluster, what, r)
			}
		}
		// a new workspace with the same name starts empty
		createWorkspace(t, root, org, "")
		waitWorkspacePhase(t, root, org, corev1alpha1.LogicalClusterPhaseReady, 90*time.Second)
		list := &tenancyv1alpha1.WorkspaceList{}
		if err := adminClient(t, s, "root:"+org).List(ctx, list); err != nil {
			t.Fatalf("listing workspaces in the re-created %s: %v", org, err)
		}
		if len(list.Items) != 0 {
			t.Fatalf("the re-created workspace %s should have no child workspaces, found %d (first: %s)", org, len(list.Items), describeWorkspace(&list.Items[0]))
		}
	})
}

// TestWorkspaceTypeNotAllowed checks type admission and navigation errors
// through the plugin.
func TestWorkspaceTypeNotAllowed(t *testing.T) {
	t.Parallel()
	s := server(t)
	k := s.WorkspaceKubectl(t, "root")
	name := framework.UniqueName("e2e-team")

	out, errOut, err := k.WSErr(t, "create", name, "--type", "root:team")
	framework.RequireFails(t, out, errOut, err, "kubectl ws create --type root:team in root", "root:team", "root:organization")
	if code := framework.ExitCode(err); code == 0 {
		t.Fatalf("kubectl ws create --type root:team in root should exit non-zero, got %d", code)
	}
	if _, errOut, err := k.RunErr(t, "get", "workspace", name); err == nil || !strings.Contains(errOut, "NotFound") && !strings.Contains(errOut, "not found") {
		t.Fatalf("the refused workspace %s should not exist; kubectl get workspace: err=%v stderr=%s", name, err, errOut)
	}

	// the same through the API: 422 Invalid naming the allowed parent types
	body := framework.MustJSON(t, map[string]any{
		"apiVersion": "tenancy.kcp.io/v1alpha1", "kind": "Workspace",
		"metadata": map[string]any{"name": name},
		"spec":     map[string]any{"type": map[string]any{"name": "team", "path": "root"}},
	})
	r := s.Request(t, s.KCPAdminToken(t), http.MethodPost, "/clusters/root/apis/tenancy.kcp.io/v1alpha1/workspaces", body)
	framework.RequireStatus(t, r, "POST a root:team Workspace in root", http.StatusUnprocessableEntity, string(metav1.StatusReasonInvalid))
	if st := r.Status(t); !strings.Contains(st.Message, "root:organization") {
		t.Fatalf("the 422 for a root:team workspace in root should name the allowed parent types (root:organization, root:team), got message %q", st.Message)
	}

	// an organization only goes into root
	org := framework.UniqueName("e2e-org")
	t.Cleanup(func() { _, _, _ = s.KubectlFor("root").RunErr(t, "delete", "workspace", org, "--wait=false") })
	k.WS(t, "create", org, "--enter")
	out, errOut, err = k.WSErr(t, "create", "nested-org", "--type", "root:organization")
	framework.RequireFails(t, out, errOut, err, "kubectl ws create --type root:organization inside an organization", "root:organization", "root:root")
	// a team in an organization is fine
	framework.RequireContains(t, k.WS(t, "create", "team", "--type", "root:team"), "is ready to use", "kubectl ws create --type root:team in an organization")

	// entering an unknown workspace fails and leaves the kubeconfig alone
	before := k.CurrentServer(t)
	out, errOut, err = k.WSErr(t, "does-not-exist")
	framework.RequireFails(t, out, errOut, err, "kubectl ws does-not-exist", fmt.Sprintf("workspace %q not found", "root:"+org+":does-not-exist"))
	framework.RequireEqual(t, k.CurrentServer(t), before, "current server after failing to enter an unknown workspace")
	out, errOut, err = k.WSErr(t, ":root:"+framework.UniqueName("e2e-missing"))
	framework.RequireFails(t, out, errOut, err, "kubectl ws :root:<unknown>", "not found")
	framework.RequireEqual(t, k.CurrentServer(t), before, "current server after failing to enter an unknown absolute workspace")
}

// homeWorkspace fetches the caller's home through workspaces/~, waiting out
// 429 answers (the home is being created).
func homeWorkspace(t *testing.T, s *framework.Server, token string) *tenancyv1alpha1.Workspace {
	t.Helper()
	const path = "/clusters/root/apis/tenancy.kcp.io/v1alpha1/workspaces/~"
	var ws tenancyv1alpha1.Workspace
	framework.Eventually(t, 60*time.Second, 500*time.Millisecond, "GET "+path+" to return the home workspace", func() (bool, string) {
		r := s.Request(t, token, http.MethodGet, path, nil)
		switch {
		case r.Err != nil:
			return false, r.String()
		case r.Code == http.StatusTooManyRequests:
			if r.Header.Get("Retry-After") == "" {
				t.Fatalf("GET %s answered 429 without a Retry-After header: %s", path, r)
			}
			return false, r.String()
		case r.Code != http.StatusOK:
			t.Fatalf("GET %s: expected 200 (or 429 while the home is created), got %s", path, r)
		}
		if err := json.Unmarshal(r.Body, &ws); err != nil {
			t.Fatalf("decoding the home workspace: %v\n%s", err, r)
		}
		return true, ""
	})
	return &ws
}

// TestHomeWorkspace checks the workspaces/~ endpoint.
func TestHomeWorkspace(t *testing.T) {
	t.Parallel()
	s := server(t)
	ws := homeWorkspace(t, s, s.UserToken(t, "carol"))
	framework.RequireEqual(t, ws.Spec.URL, s.ClusterURL("user:carol"), "spec.URL of carol's home")
	framework.RequireEqual(t, ws.Status.Phase, corev1alpha1.LogicalClusterPhaseReady, "phase of carol's home once returned with 200")
	if ws.Spec.Type == nil || ws.Spec.Type.Name != "home" {
		t.Fatalf("carol's home should be of type root:home: %s", describeWorkspace(ws))
	}
	again := homeWorkspace(t, s, s.UserToken(t, "carol"))
	framework.RequireEqual(t, again.Spec.Cluster, ws.Spec.Cluster, "spec.cluster of carol's home on a second request")

	// carol is admin in her home, which is a universal workspace
	k := s.KubectlAsUser(t, "carol", "user:carol")
	framework.RequireEqual(t, strings.TrimSpace(k.Run(t, "auth", "can-i", "*", "*")), "yes", "carol: kubectl auth can-i '*' '*' in her home")
	framework.RequireContains(t, k.Run(t, "get", "namespaces", "-o", "name"), "namespace/default", "namespaces in carol's home")

	r := s.Request(t, "", http.MethodGet, "/clusters/root/apis/tenancy.kcp.io/v1alpha1/workspaces/~", nil)
	framework.RequireCode(t, r, "GET workspaces/~ without credentials", http.StatusUnauthorized, http.StatusForbidden)
}

// TestTenantIsolation has alice and bob each create a workspace in their
// home and checks that neither can reach the other's.
func TestTenantIsolation(t *testing.T) {
	t.Parallel()
	s := server(t)
	type tenant struct {
		user, home, child, secret string
		k                         *framework.Kubectl
	}
	tenants := []*tenant{{user: "alice"}, {user: "bob"}}
	for _, tn := range tenants {
		tn.k = s.UserWorkspaceKubectl(t, tn.user, "root")
		tn.home = "user:" + tn.user
		tn.child = framework.UniqueName("e2e-proj")
		tn.secret = framework.UniqueName(tn.user + "-secret")

		requireCurrentWorkspace(t, tn.k, tn.k.WS(t), tn.home, tn.user+": kubectl ws (home)")
		requireCurrentWorkspace(t, tn.k, tn.k.WS(t, "~"), tn.home, tn.user+": kubectl ws ~")
		tn.k.Run(t, "create", "configmap", tn.secret, "-n", "default", "--from-literal=owner="+tn.user)
		framework.RequireEqual(t, strings.TrimSpace(tn.k.Run(t, "auth", "can-i", "*", "*")), "yes", tn.user+": kubectl auth can-i '*' '*' in the home")

		out := tn.k.WS(t, "create", tn.child, "--enter")
		framework.RequireContains(t, out, "is ready to use", tn.user+": kubectl ws create in the home")
		requireCurrentWorkspace(t, tn.k, out, tn.home+":"+tn.child, tn.user+": kubectl ws create --enter in the home")
		tn.k.Run(t, "create", "configmap", tn.secret, "-n", "default", "--from-literal=owner="+tn.user)
		framework.RequireEqual(t, strings.TrimSpace(tn.k.Run(t, "auth", "can-i", "*", "*")), "yes", tn.user+": kubectl auth can-i '*' '*' in the workspace they created")
		requireCurrentWorkspace(t, tn.k, tn.k.WS(t, ".."), tn.home, tn.user+": kubectl ws .. back home")
		out = tn.k.Run(t, "get", "workspaces")
		_, cell := framework.TableRow(t, out, tn.child)
		framework.RequireEqual(t, cell("PHASE"), "Ready", tn.user+": phase of "+tn.child)
		t.Cleanup(func() {
			if _, _, err := tn.k.RunErr(t, "--server", s.ClusterURL(tn.home), "delete", "workspace", tn.child, "--wait=false"); err != nil {
				t.Logf("cleanup: %s deleting %s: %v", tn.user, tn.child, err)
			}
		})
	}

	for _, pair := range [][2]*tenant{{tenants[1], tenants[0]}, {tenants[0], tenants[1]}} {
		intruder, victim := pair[0], pair[1]
		t.Run(intruder.user+" in "+victim.user+"'s workspaces", func(t *testing.T) {
			token := s.UserToken(t, intruder.user)
			for _, p := range []string{victim.home, victim.home + ":" + victim.child} {
				// plugin: entering is denied, the kubeconfig stays
				before := intruder.k.CurrentServer(t)
				out, errOut, err := intruder.k.WSErr(t, ":"+p)
				framework.RequireFails(t, out, errOut, err, intruder.user+": kubectl ws :"+p, fmt.Sprintf("access to workspace %q denied", p))
				framework.RequireEqual(t, intruder.k.CurrentServer(t), before, intruder.user+"'s current server after being denied "+p)

				// kubectl: configmaps are not readable, nor listed
				out, errOut, err = intruder.k.RunErr(t, "--server", s.ClusterURL(p), "get", "configmaps", "-n", "default", "-o", "name")
				framework.RequireFails(t, out, errOut, err, intruder.user+": kubectl get configmaps in "+p, "forbidden")
				if strings.Contains(out+errOut, victim.secret) {
					t.Fatalf("%s can see %s's configmap %s in %s:\n%s%s", intruder.user, victim.user, victim.secret, p, out, errOut)
				}
				_, _, err = intruder.k.RunErr(t, "--server", s.ClusterURL(p), "create", "configmap", "intruder", "-n", "default")
				if err == nil {
					t.Fatalf("%s could create a configmap in %s", intruder.user, p)
				}

				// raw API: 403 naming the workspace
				for _, path := range []string{
					"/clusters/" + p + "/api/v1/namespaces/default/configmaps",
					"/clusters/" + p + "/api/v1/namespaces/default/configmaps/" + victim.secret,
					"/clusters/" + p + "/apis/tenancy.kcp.io/v1alpha1/workspaces",
				} {
					r := s.Request(t, token, http.MethodGet, path, nil)
					framework.RequireStatus(t, r, intruder.user+": GET "+path, http.StatusForbidden, string(metav1.StatusReasonForbidden))
					if st := r.Status(t); !strings.Contains(st.Message, "access to workspace") || !strings.Contains(st.Message, "denied") {
						t.Fatalf("%s: GET %s: the 403 should say \"access to workspace ... denied\", got %q", intruder.user, path, st.Message)
					}
					if strings.Contains(string(r.Body), `"owner"`) {
						t.Fatalf("%s: GET %s leaked data: %s", intruder.user, path, r)
					}
				}
			}
		})
	}

	// the owners still see their own content
	for _, tn := range tenants {
		cm := s.KubectlAsUser(t, tn.user, tn.home+":"+tn.child).GetConfigMap(t, "default", tn.secret)
		framework.RequireData(t, cm, map[string]string{"owner": tn.user}, tn.user+"'s configmap in "+tn.child)
	}
}

// waitConfigMap waits for a configmap to exist through c.
func waitConfigMap(t *testing.T, c client.Client, where, ns, name string, timeout time.Duration) *corev1.ConfigMap {
	t.Helper()
	cm := &corev1.ConfigMap{}
	framework.Eventually(t, timeout, 250*time.Millisecond, fmt.Sprintf("configmap %s/%s in %s", ns, name, where), func() (bool, string) {
		ctx := testContext(t, 20*time.Second)
		err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, cm)
		return err == nil, framework.ErrString(err)
	})
	return cm
}
