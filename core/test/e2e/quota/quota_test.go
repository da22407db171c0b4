package quota

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

const ns = "team"

func clientFor(t *testing.T, s *framework.Server, cluster string) kubernetes.Interface {
	t.Helper()
	cs, err := kubernetes.NewForConfig(s.RESTConfig(t, cluster))
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// waitUsed waits until the quota's status.used[name] is want.
func waitUsed(t *testing.T, k *framework.Kubectl, namespace, quota, name, want string) {
	t.Helper()
	path := fmt.Sprintf(`jsonpath={.status.used.%s}`, escape(name))
	framework.Eventually(t, 30*time.Second, 200*time.Millisecond, fmt.Sprintf("quota %s used %s to be %s", quota, name, want), func() (bool, string) {
		got := k.Run(t, "get", "resourcequota", quota, "-n", namespace, "-o", path)
		return got == want, "used: " + got
	})
}

// escape quotes the dots of a resource name for a jsonpath.
func escape(name string) string {
	out := ""
	for _, r := range name {
		if r == '.' || r == '/' {
			out += `\`
		}
		out += string(r)
	}
	return out
}

// TestConfigMapQuota: a quota of 2 ConfigMaps refuses the third with 403
// in its workspace only; status.used follows creates and deletes.
func TestConfigMapQuota(t *testing.T) {
	s := server(t)
	org := s.CreateOrg(t, "e2e-quota")
	ws := s.CreateWorkspaces(t, org.Path, "limited", "free")
	limited, free := s.KubectlFor(ws[0].Path), s.KubectlFor(ws[1].Path)
	for _, k := range []*framework.Kubectl{limited, free} {
		k.Run(t, "create", "namespace", ns)
	}
	limited.Run(t, "create", "quota", "cms", "-n", ns, "--hard=count/configmaps=2")
	// Namespaces may hold configmaps of their own (kube-root-ca.crt):
	// the quota counts them, so start from what it found.
	waitUsed(t, limited, ns, "cms", "count/configmaps", existing(t, limited))
	base := countConfigMaps(t, limited)
	framework.RequireEqual(t, limited.Run(t, "get", "resourcequota", "cms", "-n", ns, "-o", "jsonpath={.status.hard.count\\/configmaps}"),
		"2", "status.hard")

	for i := base + 1; i <= 2; i++ {
		limited.Run(t, "create", "configmap", fmt.Sprintf("c%d", i), "-n", ns)
		waitUsed(t, limited, ns, "cms", "count/configmaps", fmt.Sprint(i))
	}
	out, stderr, err := limited.RunErr(t, "create", "configmap", "c3", "-n", ns)
	framework.RequireFails(t, out, stderr, err, "kubectl create of a configmap beyond the quota",
		`configmaps "c3" is forbidden: exceeded quota: cms, requested: count/configmaps=1, used: count/configmaps=2, limited: count/configmaps=2`)

	// client-go sees the 403.
	cs := clientFor(t, s, ws[0].Path)
	_, err = cs.CoreV1().ConfigMaps(ns).Create(framework.CallContext(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c4"}}, metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) {
		t.Fatalf("client-go create beyond the quota: want 403 Forbidden, got %v", err)
	}

	// The other workspace is not limited.
	for i := 1; i <= 4; i++ {
		free.Run(t, "create", "configmap", fmt.Sprintf("c%d", i), "-n", ns)
	}
	// Other namespaces of the limited workspace are not counted.
	limited.Run(t, "create", "namespace", "other")
	limited.Run(t, "create", "configmap", "elsewhere", "-n", "other")
	waitUsed(t, limited, ns, "cms", "count/configmaps", "2")

	// A delete frees quota.
	limited.Run(t, "delete", "configmap", "c2", "-n", ns)
	waitUsed(t, limited, ns, "cms", "count/configmaps", "1")
	limited.Run(t, "create", "configmap", "c3", "-n", ns)
	waitUsed(t, limited, ns, "cms", "count/configmaps", "2")
}

func countConfigMaps(t *testing.T, k *framework.Kubectl) int {
	t.Helper()
	return len(framework.Names(k.Run(t, "get", "configmaps", "-n", ns, "-o", "name")))
}

func existing(t *testing.T, k *framework.Kubectl) string {
	return fmt.Sprint(countConfigMaps(t, k))
}

// TestCoreCountedResources: the bare names (secrets, configmaps,
// resourcequotas) count like kube's.
func TestCoreCountedResources(t *testing.T) {
	s := server(t)
	cluster, k := s.NewCluster(t, "e2e-quota-core")
	k.Run(t, "create", "namespace", ns)
	k.Run(t, "create", "quota", "core", "-n", ns, "--hard=secrets=1,resourcequotas=2")
	waitUsed(t, k, ns, "core", "resourcequotas", "1")
	waitUsed(t, k, ns, "core", "secrets", "0")
	k.Run(t, "create", "secret", "generic", "s1", "-n", ns, "--from-literal=a=b")
	waitUsed(t, k, ns, "core", "secrets", "1")
	out, stderr, err := k.RunErr(t, "create", "secret", "generic", "s2", "-n", ns, "--from-literal=a=b")
	framework.RequireFails(t, out, stderr, err, "a second secret", "exceeded quota: core", "limited: secrets=1")
	r := s.AdminRequest(t, "POST", fmt.Sprintf("/clusters/%s/api/v1/namespaces/%s/secrets", cluster, ns),
		framework.MustJSON(t, map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "s3"}}))
	framework.RequireStatus(t, r, "raw POST of a secret beyond the quota", 403, "Forbidden")
	framework.RequireContains(t, r.Status(t).Message, "exceeded quota", "message of the 403 Status")
}

// TestUnservedResources: compute, storage and Service-type names are
// counted on Kubernetes from pods, claims and services, which the core
// does not serve: their usage is 0 (as kube reports it with none of them),
// and names kube does not know are refused as kube-apiserver refuses them.
func TestUnservedResources(t *testing.T) {
	s := server(t)
	cluster, k := s.NewCluster(t, "e2e-quota-unserved")
	k.Run(t, "create", "namespace", ns)
	k.Run(t, "create", "quota", "compute", "-n", ns,
		"--hard=requests.cpu=1,limits.memory=1Gi,requests.storage=10Gi,services.loadbalancers=1,pods=2,services=2,configmaps=100")
	for _, name := range []string{"requests.cpu", "limits.memory", "requests.storage", "services.loadbalancers", "pods", "services"} {
		waitUsed(t, k, ns, "compute", name, "0")
	}
	waitUsed(t, k, ns, "compute", "configmaps", "1") // kube-root-ca.crt

	out, stderr, err := k.RunErr(t, "create", "quota", "bad", "-n", ns, "--hard=foo=1")
	framework.RequireFails(t, out, stderr, err, "a quota of an unknown resource", "must be a standard resource for quota")
	r := s.AdminRequest(t, "POST", fmt.Sprintf("/clusters/%s/api/v1/namespaces/%s/resourcequotas", cluster, ns),
		framework.MustJSON(t, map[string]any{"apiVersion": "v1", "kind": "ResourceQuota", "metadata": map[string]any{"name": "neg"},
			"spec": map[string]any{"hard": map[string]any{"count/configmaps": "-1"}}}))
	framework.RequireStatus(t, r, "a quota with a negative count", 422, "Invalid")
}

// TestCustomResourceQuota: count/<resource>.<group> of a CRD kind.
func TestCustomResourceQuota(t *testing.T) {
	s := server(t)
	_, k := s.NewCluster(t, "e2e-quota-crd")
	k.Run(t, "create", "namespace", ns)
	k.RunStdin(t, `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: tickets.quota.e2e.meshplane.io
spec:
  group: quota.e2e.meshplane.io
  scope: Namespaced
  names: {plural: tickets, singular: ticket, kind: Ticket, listKind: TicketList}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            x-kubernetes-preserve-unknown-fields: true
`, "apply", "-f", "-")
	k.WaitForCRD(t, "tickets.quota.e2e.meshplane.io", "tickets", ns)
	k.Run(t, "create", "quota", "tickets", "-n", ns, "--hard=count/tickets.quota.e2e.meshplane.io=1")
	waitUsed(t, k, ns, "tickets", "count/tickets.quota.e2e.meshplane.io", "0")
	ticket := func(name string) string {
		return fmt.Sprintf("apiVersion: quota.e2e.meshplane.io/v1\nkind: Ticket\nmetadata:\n  name: %s\n  namespace: %s\n", name, ns)
	}
	k.RunStdin(t, ticket("t1"), "create", "-f", "-")
	waitUsed(t, k, ns, "tickets", "count/tickets.quota.e2e.meshplane.io", "1")
	out, stderr, err := k.RunStdinErr(t, ticket("t2"), "create", "-f", "-")
	framework.RequireFails(t, out, stderr, err, "a second ticket", "exceeded quota: tickets")
	k.Run(t, "delete", "ticket", "t1", "-n", ns)
	waitUsed(t, k, ns, "tickets", "count/tickets.quota.e2e.meshplane.io", "0")
	k.RunStdin(t, ticket("t2"), "create", "-f", "-")
}

// TestClusterScopedQuota: a quota in the admin namespace annotated
// experimental.quota.kcp.io/cluster-scoped counts the whole workspace,
// Workspaces included, as in kcp.
func TestClusterScopedQuota(t *testing.T) {
	s := server(t)
	org := s.CreateOrg(t, "e2e-quota-cs")
	k := s.KubectlFor(org.Path)
	k.Run(t, "create", "namespace", "admin")
	s.CreateWorkspaces(t, org.Path, "child")
	cs := clientFor(t, s, org.Path)
	ctx := framework.CallContext(t)
	_, err := cs.CoreV1().ResourceQuotas("admin").Create(ctx, &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "cluster-scoped", Annotations: map[string]string{"experimental.quota.kcp.io/cluster-scoped": "true"}},
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{
			"count/workspaces.tenancy.kcp.io": resource.MustParse("2"),
			"count/configmaps":                resource.MustParse("100"),
		}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating the cluster-scoped quota: %v", err)
	}
	waitUsed(t, k, "admin", "cluster-scoped", "count/workspaces.tenancy.kcp.io", "1")
	// ConfigMaps of every namespace count.
	k.Run(t, "create", "namespace", ns)
	before := len(framework.Names(k.Run(t, "get", "configmaps", "-A", "-o", "name")))
	k.Run(t, "create", "configmap", "anywhere", "-n", ns)
	waitUsed(t, k, "admin", "cluster-scoped", "count/configmaps", fmt.Sprint(before+1))

	s.CreateWorkspaces(t, org.Path, "second")
	waitUsed(t, k, "admin", "cluster-scoped", "count/workspaces.tenancy.kcp.io", "2")
	dyn := s.Dynamic(t, org.Path)
	_, err = dyn.Resource(framework.WorkspaceGVR).Create(ctx, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "tenancy.kcp.io/v1alpha1", "kind": "Workspace", "metadata": map[string]any{"name": "third"}}}, metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) {
		t.Fatalf("a third workspace beyond the cluster-scoped quota: want 403 Forbidden, got %v", err)
	}
	framework.RequireContains(t, err.Error(), "exceeded quota: cluster-scoped", "the refusal")

	// The same quota without the annotation counts no workspace.
	k.Run(t, "create", "quota", "plain", "-n", "admin", "--hard=count/workspaces.tenancy.kcp.io=0")
	waitUsed(t, k, "admin", "plain", "count/workspaces.tenancy.kcp.io", "0")
}
