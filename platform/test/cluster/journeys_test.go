package cluster

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

const orgPath = "root:orgs:" + org

// grantJourney: alice founds an organization; bob is refused in it until
// alice grants him the member role (a RoleAssignment, answered by the
// rebac-authz-webhook from OpenFGA, all running in the cluster).
func grantJourney(t *testing.T, s *framework.Server) {
	t.Helper()
	alice := s.KubectlAsUser(t, "alice", "root:orgs")
	alice.RunStdin(t, fmt.Sprintf("apiVersion: core.platform-mesh.io/v1alpha1\nkind: Account\nmetadata:\n  name: %s\nspec:\n  type: org\n  displayName: E2E\n  creator: alice\n", org), "create", "-f", "-")
	alice.Run(t, "wait", "--for=condition=Ready", "account/"+org, "--timeout=5m")
	inOrg := s.KubectlAsUser(t, "alice", orgPath)
	framework.Eventually(t, 2*time.Minute, time.Second, "alice to create a namespace in her organization", func() (bool, string) {
		_, errOut, err := inOrg.RunErr(t, "create", "namespace", "apps")
		return err == nil, errOut
	})
	inOrg.Run(t, "create", "configmap", "cfg", "-n", "apps", "--from-literal=k=v")

	bob := s.KubectlAsUser(t, "bob", orgPath)
	if _, errOut, err := bob.RunErr(t, "get", "configmaps", "-n", "apps"); err == nil || !strings.Contains(errOut, "Forbidden") {
		t.Fatalf("bob read configmaps in %s before any grant: %v %s", orgPath, err, errOut)
	}
	inOrg.RunStdin(t, "apiVersion: core.platform-mesh.io/v1alpha1\nkind: RoleAssignment\nmetadata:\n  name: bob-member\nspec:\n  subject:\n    kind: User\n    name: bob\n  role: member\n", "apply", "-f", "-")
	framework.Eventually(t, 2*time.Minute, time.Second, "bob to read once granted", func() (bool, string) {
		out, errOut, err := bob.RunErr(t, "get", "configmaps", "-n", "apps")
		return err == nil && strings.Contains(out, "cfg"), errOut
	})
}

// providerJourney: the MongoDB example provider runs in the cluster; its
// API is bound in root:examples-mongodb-demo (by the install's bootstrap);
// a MongoDB made there is reconciled into the downstream workspace.
func providerJourney(t *testing.T, s *framework.Server) {
	t.Helper()
	demo := s.KubectlFor("root:examples-mongodb-demo")
	framework.Eventually(t, 3*time.Minute, 2*time.Second, "the bound mongodbs API served in the demo workspace", func() (bool, string) {
		_, errOut, err := demo.RunErr(t, "get", "mongodbs", "-n", "default")
		return err == nil, errOut
	})
	demo.RunStdin(t, "apiVersion: mongodb.examples.meshplane.io/v1alpha1\nkind: MongoDB\nmetadata: {name: orders, namespace: default}\nspec: {version: \"7.0.12\", storageSize: 1Gi}\n", "apply", "-f", "-")
	demo.Run(t, "wait", "--for=condition=Synced", "mongodb/orders", "--timeout=3m")
	if out := s.KubectlFor("root:examples-mongodb-downstream").Run(t, "-n", "mongodb-provider", "get", "mongodbcommunity", "-l", "mongodb.examples.meshplane.io/name=orders", "-o", "name"); !strings.Contains(out, "mdb-") {
		t.Errorf("no downstream object for MongoDB orders: %q", out)
	}
}

// checkData: what the journeys made is still there and still works: the
// organization, alice's ConfigMap, bob's grant (OpenFGA's store), the
// provider's MongoDB.
func checkData(t *testing.T, s *framework.Server) {
	t.Helper()
	framework.Eventually(t, 3*time.Minute, 2*time.Second, "the platform to answer with its data", func() (bool, string) {
		out, errOut, err := s.KubectlFor("root:orgs").RunErr(t, "get", "account", org, "-o", `jsonpath={.status.conditions[?(@.type=="Ready")].status}`)
		return err == nil && out == "True", out + errOut
	})
	framework.Eventually(t, 3*time.Minute, 2*time.Second, "bob's grant to still work", func() (bool, string) {
		out, errOut, err := s.KubectlAsUser(t, "bob", orgPath).RunErr(t, "get", "configmap", "cfg", "-n", "apps", "-o", "jsonpath={.data.k}")
		return err == nil && out == "v", out + errOut
	})
	if out := s.KubectlAsUser(t, "alice", orgPath).Run(t, "get", "roleassignment", "bob-member", "-o", "name"); !strings.Contains(out, "bob-member") {
		t.Errorf("RoleAssignment bob-member gone: %q", out)
	}
	if out := s.KubectlFor("root:examples-mongodb-demo").Run(t, "get", "mongodb", "orders", "-o", "name"); !strings.Contains(out, "orders") {
		t.Errorf("MongoDB orders gone: %q", out)
	}
}

// leftovers fails on any object left in ns after uninstall but keep and the
// PersistentVolumeClaims (kept by default: the shards' data, OpenFGA's
// store), which it lists.
func leftovers(t *testing.T, cs kubernetes.Interface, ns string, keep map[string]bool) {
	t.Helper()
	// Pods terminate and the bootstrap's Secrets follow their owner
	// ServiceAccount (garbage collection) after helm returns.
	framework.Eventually(t, 3*time.Minute, 2*time.Second, "nothing but the volumes left after helm uninstall", func() (bool, string) {
		left := objectsIn(t, cs, ns, keep)
		return len(left) == 0, strings.Join(left, ", ")
	})
	pvcs, err := cs.CoreV1().PersistentVolumeClaims(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, p := range pvcs.Items {
		kept = append(kept, p.Name)
	}
	t.Logf("volumes kept: %v", kept)
	if len(kept) < 2 {
		t.Errorf("uninstall kept %v, want the core's data and OpenFGA's store (keepOnUninstall defaults)", kept)
	}
}

// objectsIn lists the objects of ns but keep and PersistentVolumeClaims.
func objectsIn(t *testing.T, cs kubernetes.Interface, ns string, keep map[string]bool) []string {
	t.Helper()
	ctx := context.Background()
	var left []string
	add := func(kind string, names []string, err error) {
		if err != nil {
			left = append(left, fmt.Sprintf("(listing %s: %v)", kind, err))
		}
		for _, n := range names {
			if !keep[kind+"/"+n] {
				left = append(left, kind+"/"+n)
			}
		}
	}
	lo := metav1.ListOptions{}
	pods, err := cs.CoreV1().Pods(ns).List(ctx, lo)
	add("Pod", names(err, func() []string { return metaNames(pods.Items, func(i int) string { return pods.Items[i].Name }) }), err)
	svcs, err := cs.CoreV1().Services(ns).List(ctx, lo)
	add("Service", names(err, func() []string { return metaNames(svcs.Items, func(i int) string { return svcs.Items[i].Name }) }), err)
	cms, err := cs.CoreV1().ConfigMaps(ns).List(ctx, lo)
	add("ConfigMap", names(err, func() []string { return metaNames(cms.Items, func(i int) string { return cms.Items[i].Name }) }), err)
	secrets, err := cs.CoreV1().Secrets(ns).List(ctx, lo)
	add("Secret", names(err, func() []string { return metaNames(secrets.Items, func(i int) string { return secrets.Items[i].Name }) }), err)
	sas, err := cs.CoreV1().ServiceAccounts(ns).List(ctx, lo)
	add("ServiceAccount", names(err, func() []string { return metaNames(sas.Items, func(i int) string { return sas.Items[i].Name }) }), err)
	deps, err := cs.AppsV1().Deployments(ns).List(ctx, lo)
	add("Deployment", names(err, func() []string { return metaNames(deps.Items, func(i int) string { return deps.Items[i].Name }) }), err)
	stss, err := cs.AppsV1().StatefulSets(ns).List(ctx, lo)
	add("StatefulSet", names(err, func() []string { return metaNames(stss.Items, func(i int) string { return stss.Items[i].Name }) }), err)
	roles, err := cs.RbacV1().Roles(ns).List(ctx, lo)
	add("Role", names(err, func() []string { return metaNames(roles.Items, func(i int) string { return roles.Items[i].Name }) }), err)
	rbs, err := cs.RbacV1().RoleBindings(ns).List(ctx, lo)
	add("RoleBinding", names(err, func() []string { return metaNames(rbs.Items, func(i int) string { return rbs.Items[i].Name }) }), err)
	nps, err := cs.NetworkingV1().NetworkPolicies(ns).List(ctx, lo)
	add("NetworkPolicy", names(err, func() []string { return metaNames(nps.Items, func(i int) string { return nps.Items[i].Name }) }), err)
	pdbs, err := cs.PolicyV1().PodDisruptionBudgets(ns).List(ctx, lo)
	add("PodDisruptionBudget", names(err, func() []string { return metaNames(pdbs.Items, func(i int) string { return pdbs.Items[i].Name }) }), err)
	sort.Strings(left)
	return left
}

func names(err error, f func() []string) []string {
	if err != nil {
		return nil
	}
	return f()
}

func metaNames[T any](items []T, name func(int) string) []string {
	out := make([]string, len(items))
	for i := range items {
		out[i] = name(i)
	}
	return out
}
