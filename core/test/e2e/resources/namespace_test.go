package resources

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestNamespaceLifecycle checks namespace existence for namespaced creates,
// the Terminating phase and the cascading delete of a namespace's content.
func TestNamespaceLifecycle(t *testing.T) {
	s := server(t)
	cluster, k := s.NewCluster(t, "e2e-ns")

	// A configmap in a namespace that does not exist.
	out, stderr, err := k.RunErr(t, "create", "configmap", "orphan", "-n", "missing", "--from-literal=a=b")
	framework.RequireFails(t, out, stderr, err, "creating a configmap in a missing namespace", `namespaces "missing" not found`)
	r := s.AdminRequest(t, "POST", fmt.Sprintf("/clusters/%s/api/v1/namespaces/missing/configmaps", cluster), framework.ConfigMapJSON(t, "orphan", nil))
	framework.RequireStatus(t, r, "raw POST of a configmap in a missing namespace", 404, "NotFound")

	const ns = "doomed"
	k.Run(t, "create", "namespace", ns)
	framework.RequireEqual(t, k.Run(t, "get", "namespace", ns, "-o", "jsonpath={.status.phase}"), "Active", "phase of a new namespace")
	for i := 1; i <= 3; i++ {
		k.Run(t, "create", "configmap", fmt.Sprintf("c%d", i), "-n", ns, "--from-literal=i="+fmt.Sprint(i))
	}
	// A configmap with a finalizer keeps the namespace Terminating until the
	// finalizer is removed, so the terminating state can be observed.
	held := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: held\n  namespace: %s\n  finalizers:\n  - e2e.meshplane.io/hold\ndata:\n  k: v\n", ns)
	k.RunStdin(t, held, "create", "-f", "-")

	framework.RequireContains(t, k.Run(t, "delete", "namespace", ns, "--wait=false"), `namespace "doomed" deleted`, "kubectl delete namespace")
	framework.Eventually(t, 10*time.Second, 200*time.Millisecond, "namespace "+ns+" to be Terminating", func() (bool, string) {
		phase, stderr, err := k.RunErr(t, "get", "namespace", ns, "-o", "jsonpath={.status.phase}")
		return err == nil && phase == "Terminating", fmt.Sprintf("phase=%q err=%v %s", phase, err, stderr)
	})

	// Creating in a terminating namespace is refused like kube does.
	out, stderr, err = k.RunErr(t, "create", "configmap", "late", "-n", ns)
	framework.RequireFails(t, out, stderr, err, "creating a configmap in a terminating namespace", "forbidden", "being terminated")
	r = s.AdminRequest(t, "POST", fmt.Sprintf("/clusters/%s/api/v1/namespaces/%s/configmaps", cluster, ns), framework.ConfigMapJSON(t, "late", nil))
	framework.RequireStatus(t, r, "raw POST of a configmap in a terminating namespace", 403, "Forbidden")
	framework.RequireContains(t, r.Status(t).Message, "being terminated", "message of the 403 Status")

	// The namespace's content is deleted; the held configmap waits for its finalizer.
	framework.Eventually(t, 30*time.Second, 500*time.Millisecond, "configmaps c1..c3 of the terminating namespace to be deleted", func() (bool, string) {
		out, stderr, err := k.RunErr(t, "get", "configmaps", "-n", ns, "-o", "name")
		left := framework.Names(out)
		for _, n := range left {
			if n != "configmap/held" && n != "configmap/kube-root-ca.crt" {
				return false, fmt.Sprintf("still there: %v (err=%v %s)", left, err, stderr)
			}
		}
		return err == nil, fmt.Sprintf("left %v err=%v %s", left, err, stderr)
	})
	framework.Eventually(t, 30*time.Second, 500*time.Millisecond, "configmap held to be marked for deletion", func() (bool, string) {
		ts, stderr, err := k.RunErr(t, "get", "configmap", "held", "-n", ns, "-o", "jsonpath={.metadata.deletionTimestamp}")
		return err == nil && ts != "", fmt.Sprintf("deletionTimestamp=%q err=%v %s", ts, err, stderr)
	})
	framework.RequireEqual(t, k.Run(t, "get", "namespace", ns, "-o", "jsonpath={.status.phase}"), "Terminating", "namespace phase while content is held by a finalizer")

	// Releasing the finalizer lets the namespace go away.
	k.Run(t, "patch", "configmap", "held", "-n", ns, "--type=json", "-p", `[{"op":"remove","path":"/metadata/finalizers"}]`)
	framework.Eventually(t, 60*time.Second, time.Second, "namespace "+ns+" to be deleted", func() (bool, string) {
		out, stderr, err := k.RunErr(t, "get", "namespace", ns, "-o", "name")
		return err != nil && strings.Contains(stderr, "not found"), fmt.Sprintf("stdout=%q stderr=%q", out, stderr)
	})
	out, stderr, err = k.RunErr(t, "get", "configmap", "held", "-n", ns)
	framework.RequireFails(t, out, stderr, err, "configmap held after its namespace is gone", "not found")

	// The name can be reused, and the new namespace is empty.
	k.Run(t, "create", "namespace", ns)
	if left := framework.Names(k.Run(t, "get", "configmaps", "-n", ns, "-o", "name")); len(left) > 0 && !(len(left) == 1 && left[0] == "configmap/kube-root-ca.crt") {
		t.Fatalf("a re-created namespace should start empty, got %v", left)
	}
}
