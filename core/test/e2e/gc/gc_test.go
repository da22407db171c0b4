package gc

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

const ns = "gc"

// cluster is one logical cluster with its clients.
type cluster struct {
	name string
	k    *framework.Kubectl
	cs   kubernetes.Interface
}

func newCluster(t *testing.T, s *framework.Server, prefix string) cluster {
	t.Helper()
	name, k := s.NewCluster(t, prefix)
	return clusterAt(t, s, name, k)
}

func clusterAt(t *testing.T, s *framework.Server, name string, k *framework.Kubectl) cluster {
	t.Helper()
	cs, err := kubernetes.NewForConfig(s.RESTConfig(t, name))
	if err != nil {
		t.Fatal(err)
	}
	k.Run(t, "create", "namespace", ns)
	return cluster{name: name, k: k, cs: cs}
}

func ref(apiVersion, kind, name string, uid types.UID, block bool) metav1.OwnerReference {
	r := metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: name, UID: uid}
	if block {
		r.BlockOwnerDeletion = &block
	}
	return r
}

func cmRef(cm *corev1.ConfigMap, block bool) metav1.OwnerReference {
	return ref("v1", "ConfigMap", cm.Name, cm.UID, block)
}

func (c cluster) configMap(t *testing.T, name string, finalizers []string, owners ...metav1.OwnerReference) *corev1.ConfigMap {
	t.Helper()
	cm, err := c.cs.CoreV1().ConfigMaps(ns).Create(framework.CallContext(t), &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: name, OwnerReferences: owners, Finalizers: finalizers},
		Data:       map[string]string{"k": "v"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating configmap %s in %s: %v", name, c.name, err)
	}
	return cm
}

// gone waits until kubectl no longer finds what.
func (c cluster) gone(t *testing.T, what string, args ...string) {
	t.Helper()
	framework.Eventually(t, 60*time.Second, 200*time.Millisecond, what+" to be deleted in "+c.name, func() (bool, string) {
		out, stderr, err := c.k.RunErr(t, append([]string{"get", "-o", "name"}, args...)...)
		return err != nil && strings.Contains(stderr, "NotFound"), fmt.Sprintf("still there: %s %s", out, stderr)
	})
}

// stays checks for a while that kubectl still finds what.
func (c cluster) stays(t *testing.T, what string, args ...string) {
	t.Helper()
	for i := 0; i < 10; i++ {
		if _, stderr, err := c.k.RunErr(t, append([]string{"get", "-o", "name"}, args...)...); err != nil {
			t.Fatalf("%s in %s should stay, but: %v %s", what, c.name, err, stderr)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestBackgroundCascade: kubectl delete --cascade=background deletes the
// owner at once and its dependents after it; an object with a live owner
// left only loses the reference to the one that went.
func TestBackgroundCascade(t *testing.T) {
	c := newCluster(t, server(t), "e2e-gc-bg")
	owner := c.configMap(t, "owner", nil)
	other := c.configMap(t, "other-owner", nil)
	for i := 1; i <= 3; i++ {
		c.configMap(t, fmt.Sprintf("dep-%d", i), nil, cmRef(owner, false))
	}
	c.configMap(t, "shared", nil, cmRef(owner, false), cmRef(other, false))

	framework.RequireContains(t, c.k.Run(t, "delete", "configmap", "owner", "-n", ns, "--cascade=background"),
		`configmap "owner" deleted`, "kubectl delete --cascade=background")
	for i := 1; i <= 3; i++ {
		c.gone(t, fmt.Sprintf("dependent dep-%d", i), "configmap", fmt.Sprintf("dep-%d", i), "-n", ns)
	}
	framework.Eventually(t, 30*time.Second, 200*time.Millisecond, "shared to keep only its live owner", func() (bool, string) {
		out := c.k.Run(t, "get", "configmap", "shared", "-n", ns, "-o", "jsonpath={.metadata.ownerReferences[*].name}")
		return out == "other-owner", "ownerReferences: " + out
	})
}

// TestForegroundCascade: with --cascade=foreground the owner waits,
// marked with the foregroundDeletion finalizer, until its dependents with
// blockOwnerDeletion are gone.
func TestForegroundCascade(t *testing.T) {
	c := newCluster(t, server(t), "e2e-gc-fg")
	owner := c.configMap(t, "owner", nil)
	// held cannot go before its test finalizer is removed, so the
	// owner's wait can be seen.
	c.configMap(t, "held", []string{"e2e.meshplane.io/hold"}, cmRef(owner, true))
	c.configMap(t, "free", nil, cmRef(owner, false))

	c.k.Run(t, "delete", "configmap", "owner", "-n", ns, "--cascade=foreground", "--wait=false")
	framework.Eventually(t, 30*time.Second, 200*time.Millisecond, "held to be marked for deletion", func() (bool, string) {
		ts := c.k.Run(t, "get", "configmap", "held", "-n", ns, "-o", "jsonpath={.metadata.deletionTimestamp}")
		return ts != "", "no deletionTimestamp"
	})
	c.gone(t, "non-blocking dependent free", "configmap", "free", "-n", ns)
	fin := c.k.Run(t, "get", "configmap", "owner", "-n", ns, "-o", "jsonpath={.metadata.finalizers}")
	framework.RequireContains(t, fin, "foregroundDeletion", "finalizers of the owner deleted in the foreground")
	c.stays(t, "the owner blocked by held", "configmap", "owner", "-n", ns)

	c.k.Run(t, "patch", "configmap", "held", "-n", ns, "--type=json", `-p=[{"op":"remove","path":"/metadata/finalizers"}]`)
	c.gone(t, "dependent held", "configmap", "held", "-n", ns)
	c.gone(t, "owner", "configmap", "owner", "-n", ns)

	// kubectl delete --cascade=foreground waits until the owner is gone.
	owner = c.configMap(t, "owner2", nil)
	c.configMap(t, "dep2", nil, cmRef(owner, true))
	framework.RequireContains(t, c.k.Run(t, "delete", "configmap", "owner2", "-n", ns, "--cascade=foreground", "--timeout=60s"),
		`configmap "owner2" deleted`, "kubectl delete --cascade=foreground")
	c.gone(t, "dependent dep2", "configmap", "dep2", "-n", ns)
}

// TestOrphanCascade: with --cascade=orphan the dependents stay, without
// their reference to the owner.
func TestOrphanCascade(t *testing.T) {
	c := newCluster(t, server(t), "e2e-gc-orphan")
	owner := c.configMap(t, "owner", nil)
	c.configMap(t, "dep-1", nil, cmRef(owner, true))
	c.configMap(t, "dep-2", nil, cmRef(owner, false))
	c.k.Run(t, "delete", "configmap", "owner", "-n", ns, "--cascade=orphan", "--timeout=60s")
	c.gone(t, "owner", "configmap", "owner", "-n", ns)
	for _, n := range []string{"dep-1", "dep-2"} {
		framework.Eventually(t, 30*time.Second, 200*time.Millisecond, n+" to lose its ownerReference", func() (bool, string) {
			out := c.k.Run(t, "get", "configmap", n, "-n", ns, "-o", "jsonpath={.metadata.ownerReferences}")
			return out == "", "ownerReferences: " + out
		})
	}
	c.stays(t, "orphans", "configmap", "dep-1", "dep-2", "-n", ns)
}

// TestMissingOwnerAndCycle: a dependent of an owner that never existed
// is deleted; a cycle deleted in the foreground goes entirely.
func TestMissingOwnerAndCycle(t *testing.T) {
	c := newCluster(t, server(t), "e2e-gc-missing")
	c.configMap(t, "dangling", nil, ref("v1", "ConfigMap", "never", "00000000-0000-0000-0000-000000000001", false))
	c.gone(t, "dependent of an owner that never existed", "configmap", "dangling", "-n", ns)

	a := c.configMap(t, "a", nil)
	b := c.configMap(t, "b", nil, cmRef(a, true))
	a.OwnerReferences = []metav1.OwnerReference{cmRef(b, true)}
	if _, err := c.cs.CoreV1().ConfigMaps(ns).Update(framework.CallContext(t), a, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("closing the cycle: %v", err)
	}
	c.k.Run(t, "delete", "configmap", "a", "-n", ns, "--cascade=foreground", "--wait=false")
	c.gone(t, "cycle member a", "configmap", "a", "-n", ns)
	c.gone(t, "cycle member b", "configmap", "b", "-n", ns)
}

const gadgetCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gadgets.gc.e2e.meshplane.io
spec:
  group: gc.e2e.meshplane.io
  scope: Namespaced
  names: {plural: gadgets, singular: gadget, kind: Gadget, listKind: GadgetList}
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
`

var gadgets = schema.GroupVersionResource{Group: "gc.e2e.meshplane.io", Version: "v1", Resource: "gadgets"}

// TestCustomResourceCascade: custom resources own and are owned, in each
// mode.
func TestCustomResourceCascade(t *testing.T) {
	s := server(t)
	c := newCluster(t, s, "e2e-gc-crd")
	c.k.RunStdin(t, gadgetCRD, "apply", "-f", "-")
	c.k.WaitForCRD(t, "gadgets.gc.e2e.meshplane.io", "gadgets", ns)
	dyn := s.Dynamic(t, c.name).Resource(gadgets).Namespace(ns)
	gadget := func(name string, owners ...metav1.OwnerReference) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "gc.e2e.meshplane.io/v1", "kind": "Gadget",
			"metadata": map[string]any{"name": name}}}
		u.SetOwnerReferences(owners)
		out, err := dyn.Create(framework.CallContext(t), u, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("creating gadget %s: %v", name, err)
		}
		return out
	}
	gRef := func(g *unstructured.Unstructured, block bool) metav1.OwnerReference {
		return ref("gc.e2e.meshplane.io/v1", "Gadget", g.GetName(), g.GetUID(), block)
	}

	for _, mode := range []string{"background", "foreground", "orphan"} {
		t.Run(mode, func(t *testing.T) {
			owner := gadget("owner-" + mode)
			gadget("child-"+mode, gRef(owner, true))
			c.configMap(t, "cm-"+mode, nil, gRef(owner, false))
			cmOwner := c.configMap(t, "cmowner-"+mode, nil)
			gadget("cmchild-"+mode, cmRef(cmOwner, false))

			c.k.Run(t, "delete", "gadget", "owner-"+mode, "-n", ns, "--cascade="+mode, "--timeout=60s")
			c.k.Run(t, "delete", "configmap", "cmowner-"+mode, "-n", ns, "--cascade="+mode, "--timeout=60s")
			c.gone(t, "owner gadget", "gadget", "owner-"+mode, "-n", ns)
			if mode == "orphan" {
				c.stays(t, "orphaned gadget and configmap", "gadget/child-"+mode, "configmap/cm-"+mode, "gadget/cmchild-"+mode, "-n", ns)
				return
			}
			c.gone(t, "gadget owned by a gadget", "gadget", "child-"+mode, "-n", ns)
			c.gone(t, "configmap owned by a gadget", "configmap", "cm-"+mode, "-n", ns)
			c.gone(t, "gadget owned by a configmap", "gadget", "cmchild-"+mode, "-n", ns)
		})
	}
	_, err := dyn.Get(framework.CallContext(t), "owner-background", metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		t.Fatalf("owner-background: want NotFound, got %v", err)
	}
}

// TestClusterScopedCascade: cluster-scoped owners of cluster-scoped and
// namespaced dependents.
func TestClusterScopedCascade(t *testing.T) {
	c := newCluster(t, server(t), "e2e-gc-cluster")
	ctx := framework.CallContext(t)
	role := func(name string, owners ...metav1.OwnerReference) *rbacv1.ClusterRole {
		r, err := c.cs.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name, OwnerReferences: owners}},
			metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("creating clusterrole %s: %v", name, err)
		}
		return r
	}
	crRef := func(r *rbacv1.ClusterRole, block bool) metav1.OwnerReference {
		return ref("rbac.authorization.k8s.io/v1", "ClusterRole", r.Name, r.UID, block)
	}
	for _, mode := range []string{"background", "foreground", "orphan"} {
		t.Run(mode, func(t *testing.T) {
			owner := role("gc-owner-" + mode)
			role("gc-child-"+mode, crRef(owner, true))
			c.configMap(t, "of-role-"+mode, nil, crRef(owner, false))
			c.k.Run(t, "delete", "clusterrole", "gc-owner-"+mode, "--cascade="+mode, "--timeout=60s")
			c.gone(t, "owner clusterrole", "clusterrole", "gc-owner-"+mode)
			if mode == "orphan" {
				c.stays(t, "orphans", "clusterrole/gc-child-"+mode, "configmap/of-role-"+mode, "-n", ns)
				return
			}
			c.gone(t, "clusterrole owned by a clusterrole", "clusterrole", "gc-child-"+mode)
			c.gone(t, "configmap owned by a clusterrole", "configmap", "of-role-"+mode, "-n", ns)
		})
	}
}

// TestWorkspaceIsolation: an ownerReference never reaches into another
// workspace. Owners in two workspaces, same name; a reference to the
// other workspace's owner UID is dangling here; deleting the owner in one
// workspace leaves the other's dependents alone.
func TestWorkspaceIsolation(t *testing.T) {
	s := server(t)
	org := s.CreateOrg(t, "e2e-gc-iso")
	ws := s.CreateWorkspaces(t, org.Path, "a", "b")
	a := clusterAt(t, s, ws[0].Path, s.KubectlFor(ws[0].Path))
	b := clusterAt(t, s, ws[1].Path, s.KubectlFor(ws[1].Path))

	ownerA := a.configMap(t, "owner", nil)
	ownerB := b.configMap(t, "owner", nil)
	a.configMap(t, "dep", nil, cmRef(ownerA, false))
	b.configMap(t, "dep", nil, cmRef(ownerB, false))
	// Names owner, but with b's UID: in a, that owner does not exist.
	a.configMap(t, "points-at-b", nil, cmRef(ownerB, false))
	a.gone(t, "a's dependent of b's owner UID", "configmap", "points-at-b", "-n", ns)
	a.stays(t, "a's real dependent", "configmap", "dep", "-n", ns)

	a.k.Run(t, "delete", "configmap", "owner", "-n", ns)
	a.gone(t, "a's dependent", "configmap", "dep", "-n", ns)
	b.stays(t, "b's owner and dependent", "configmap", "owner", "dep", "-n", ns)
	framework.RequireEqual(t, b.k.Run(t, "get", "configmap", "dep", "-n", ns, "-o", "jsonpath={.metadata.ownerReferences[0].uid}"),
		string(ownerB.UID), "b's dependent keeps its reference")
}

// TestOwnerRefInvalidNamespace: a cluster-scoped object whose owner
// reference names a namespaced kind cannot resolve it; as kube's
// collector, the core keeps the object and reports a Warning event
// OwnerRefInvalidNamespace on it (in namespace default).
func TestOwnerRefInvalidNamespace(t *testing.T) {
	c := newCluster(t, server(t), "e2e-gc-invalid")
	owner := c.configMap(t, "ns-owner", nil)
	r, err := c.cs.RbacV1().ClusterRoles().Create(framework.CallContext(t), &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{
		Name: "invalid-owner", OwnerReferences: []metav1.OwnerReference{cmRef(owner, false)}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating the clusterrole: %v", err)
	}
	var ev corev1.Event
	framework.Eventually(t, 60*time.Second, 250*time.Millisecond, "an OwnerRefInvalidNamespace event on the clusterrole", func() (bool, string) {
		l, err := c.cs.CoreV1().Events(metav1.NamespaceDefault).List(framework.CallContext(t), metav1.ListOptions{FieldSelector: "reason=OwnerRefInvalidNamespace"})
		if err != nil {
			return false, err.Error()
		}
		for _, e := range l.Items {
			if e.InvolvedObject.Name == r.Name && e.InvolvedObject.UID == r.UID {
				ev = e
				return true, ""
			}
		}
		return false, fmt.Sprintf("%d events", len(l.Items))
	})
	framework.RequireEqual(t, ev.Type+" "+ev.InvolvedObject.APIVersion+" "+ev.InvolvedObject.Kind, "Warning rbac.authorization.k8s.io/v1 ClusterRole", "type and involved object of the event")
	framework.RequireEqual(t, ev.Message, fmt.Sprintf(`ownerRef [v1/ConfigMap, namespace: , name: ns-owner, uid: %s] does not exist in namespace ""`, owner.UID), "message of the event")
	c.stays(t, "the clusterrole with an unresolvable owner", "clusterrole", r.Name)
}
