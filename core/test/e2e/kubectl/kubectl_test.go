package kubectl

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestKubectlConfigMapCRUD walks a configmap through create, get, the three
// patch types, replace and delete with kubectl.
func TestKubectlConfigMapCRUD(t *testing.T) {
	s := server(t)
	cluster, k := s.NewCluster(t, "e2e-crud")
	const ns = "crud"
	framework.RequireContains(t, k.Run(t, "create", "namespace", ns), "namespace/crud created", "kubectl create namespace")

	out := k.Run(t, "create", "configmap", "c1", "-n", ns, "--from-literal=a=1")
	framework.RequireContains(t, out, "configmap/c1 created", "kubectl create configmap")

	cm := k.GetConfigMap(t, ns, "c1")
	framework.RequireData(t, cm, map[string]string{"a": "1"}, "after create")
	framework.RequireEqual(t, cm.Annotations[framework.ClusterAnnotation], cluster, "annotation "+framework.ClusterAnnotation+" of the configmap")
	framework.RequireEqual(t, strings.TrimSpace(k.Run(t, "get", "cm", "c1", "-n", ns, "-o", "jsonpath={.data.a}")), "1", "jsonpath .data.a")

	// The default table output is what a user sees first.
	out = k.Run(t, "get", "configmaps", "-n", ns)
	rows := framework.Table(out)
	if len(rows) < 2 || rows[0][0] != "NAME" || rows[0][len(rows[0])-1] != "AGE" {
		t.Fatalf("expected a table with a NAME ... AGE header, got:\n%s", out)
	}
	framework.RequireContains(t, strings.Join(rows[0], " "), "DATA", "configmap table header")
	_, cell := framework.TableRow(t, out, "c1")
	framework.RequireEqual(t, cell("DATA"), "1", "DATA column of c1")

	// Merge patch adds a key.
	framework.RequireContains(t, k.Run(t, "patch", "configmap", "c1", "-n", ns, "--type=merge", "-p", `{"data":{"b":"2"}}`),
		"configmap/c1 patched", "kubectl patch --type=merge")
	framework.RequireData(t, k.GetConfigMap(t, ns, "c1"), map[string]string{"a": "1", "b": "2"}, "after merge patch")

	// JSON patch replaces and removes.
	k.Run(t, "patch", "configmap", "c1", "-n", ns, "--type=json",
		"-p", `[{"op":"replace","path":"/data/a","value":"10"},{"op":"remove","path":"/data/b"}]`)
	framework.RequireData(t, k.GetConfigMap(t, ns, "c1"), map[string]string{"a": "10"}, "after json patch")

	// A JSON patch whose test fails is refused and changes nothing.
	_, stderr, err := k.RunErr(t, "patch", "configmap", "c1", "-n", ns, "--type=json",
		"-p", `[{"op":"test","path":"/data/a","value":"nope"},{"op":"replace","path":"/data/a","value":"11"}]`)
	framework.RequireFails(t, "", stderr, err, "json patch with a failing test op")
	framework.RequireData(t, k.GetConfigMap(t, ns, "c1"), map[string]string{"a": "10"}, "after a failed json patch")

	// Strategic merge patch (kubectl's default for built-in types).
	k.Run(t, "patch", "configmap", "c1", "-n", ns, "--type=strategic", "-p", `{"data":{"c":"3"},"metadata":{"labels":{"tier":"gold"}}}`)
	cm = k.GetConfigMap(t, ns, "c1")
	framework.RequireData(t, cm, map[string]string{"a": "10", "c": "3"}, "after strategic patch")
	framework.RequireEqual(t, cm.Labels["tier"], "gold", "label tier after strategic patch")
	staleRV := cm.ResourceVersion

	// Replace puts exactly the given object in place.
	replaced := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c1\n  namespace: %s\ndata:\n  replaced: \"yes\"\n", ns)
	framework.RequireContains(t, k.RunStdin(t, replaced, "replace", "-f", "-"), "configmap/c1 replaced", "kubectl replace")
	cm = k.GetConfigMap(t, ns, "c1")
	framework.RequireData(t, cm, map[string]string{"replaced": "yes"}, "after replace")
	if len(cm.Labels) != 0 {
		t.Fatalf("replace should have dropped the labels, got %v", cm.Labels)
	}

	// Replacing with an outdated resourceVersion is a conflict.
	stale := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c1\n  namespace: %s\n  resourceVersion: %q\ndata:\n  stale: \"true\"\n", ns, staleRV)
	out, stderr, err = k.RunStdinErr(t, stale, "replace", "-f", "-")
	framework.RequireFails(t, out, stderr, err, "replace with a stale resourceVersion", "the object has been modified")
	framework.RequireData(t, k.GetConfigMap(t, ns, "c1"), map[string]string{"replaced": "yes"}, "after a conflicting replace")

	framework.RequireContains(t, k.Run(t, "delete", "configmap", "c1", "-n", ns), `configmap "c1" deleted`, "kubectl delete")
	out, stderr, err = k.RunErr(t, "get", "configmap", "c1", "-n", ns)
	framework.RequireFails(t, out, stderr, err, "get after delete", `configmaps "c1" not found`)
	out, stderr, err = k.RunErr(t, "delete", "configmap", "c1", "-n", ns)
	framework.RequireFails(t, out, stderr, err, "deleting twice", "not found")
}

// TestKubectlApply covers client-side and server-side apply.
func TestKubectlApply(t *testing.T) {
	s := server(t)
	_, k := s.NewCluster(t, "e2e-apply")
	const ns = "apply"
	k.Run(t, "create", "namespace", ns)

	manifest := func(name string, data map[string]string) string {
		var b strings.Builder
		fmt.Fprintf(&b, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n  namespace: %s\n  labels:\n    app: demo\ndata:\n", name, ns)
		for _, kv := range framework.SortedMap(data) {
			k, v, _ := strings.Cut(kv, "=")
			fmt.Fprintf(&b, "  %q: %q\n", k, v) // quoted: YAML reads a bare y or n as a boolean
		}
		return b.String()
	}

	t.Run("client-side", func(t *testing.T) {
		out := k.RunStdin(t, manifest("csa", map[string]string{"a": "1", "b": "2"}), "apply", "-f", "-")
		framework.RequireContains(t, out, "configmap/csa created", "first apply")
		cm := k.GetConfigMap(t, ns, "csa")
		framework.RequireData(t, cm, map[string]string{"a": "1", "b": "2"}, "after first apply")
		if cm.Annotations["kubectl.kubernetes.io/last-applied-configuration"] == "" {
			t.Fatalf("client-side apply should record kubectl.kubernetes.io/last-applied-configuration, annotations: %v", cm.Annotations)
		}

		out = k.RunStdin(t, manifest("csa", map[string]string{"a": "1", "c": "3"}), "apply", "-f", "-")
		framework.RequireContains(t, out, "configmap/csa configured", "second apply")
		framework.RequireData(t, k.GetConfigMap(t, ns, "csa"), map[string]string{"a": "1", "c": "3"}, "after second apply (b removed, c added)")

		out = k.RunStdin(t, manifest("csa", map[string]string{"a": "1", "c": "3"}), "apply", "-f", "-")
		framework.RequireContains(t, out, "configmap/csa unchanged", "re-applying the same manifest")
	})

	t.Run("server-side", func(t *testing.T) {
		out := k.RunStdin(t, manifest("ssa", map[string]string{"x": "1", "y": "2"}), "apply", "--server-side", "-f", "-")
		framework.RequireContains(t, out, "configmap/ssa serverside-applied", "server-side apply")
		var cm corev1.ConfigMap
		out = k.Run(t, "get", "configmap", "ssa", "-n", ns, "-o", "json", "--show-managed-fields")
		if err := json.Unmarshal([]byte(out), &cm); err != nil {
			t.Fatalf("decoding configmap ssa: %v\n%s", err, out)
		}
		framework.RequireData(t, &cm, map[string]string{"x": "1", "y": "2"}, "after server-side apply")
		found := false
		for _, mf := range cm.ManagedFields {
			if mf.Manager == "kubectl" && string(mf.Operation) == "Apply" {
				found = true
			}
		}
		if !found {
			t.Fatalf("expected a managedFields entry for manager kubectl with operation Apply, got %+v", cm.ManagedFields)
		}

		k.RunStdin(t, manifest("ssa", map[string]string{"x": "1"}), "apply", "--server-side", "-f", "-")
		framework.RequireData(t, k.GetConfigMap(t, ns, "ssa"), map[string]string{"x": "1"}, "after re-applying without y")

		// Another manager changing a field owned by kubectl conflicts...
		other := manifest("ssa", map[string]string{"x": "other"})
		out, stderr, err := k.RunStdinErr(t, other, "apply", "--server-side", "--field-manager=intruder", "-f", "-")
		framework.RequireFails(t, out, stderr, err, "server-side apply by another field manager", "conflict")
		framework.RequireData(t, k.GetConfigMap(t, ns, "ssa"), map[string]string{"x": "1"}, "after a conflicting apply")

		// ... unless it forces.
		k.RunStdin(t, other, "apply", "--server-side", "--field-manager=intruder", "--force-conflicts", "-f", "-")
		framework.RequireData(t, k.GetConfigMap(t, ns, "ssa"), map[string]string{"x": "other"}, "after a forced apply")
	})
}

// TestKubectlWatch runs `kubectl get -w` in the background and checks that it
// prints the add, update and delete of a configmap.
func TestKubectlWatch(t *testing.T) {
	s := server(t)
	_, k := s.NewCluster(t, "e2e-watch")
	const ns = "watch"
	k.Run(t, "create", "namespace", ns)
	k.Run(t, "create", "configmap", "w0", "-n", ns, "--from-literal=v=0")

	hasEvent := func(event, name string) func(string) bool {
		return func(out string) bool {
			for _, row := range framework.Table(out) {
				if len(row) >= 2 && row[0] == event && row[1] == name {
					return true
				}
			}
			return false
		}
	}

	w := k.Background(t, 90*time.Second, "get", "configmaps", "-n", ns, "--watch", "--output-watch-events")
	w.WaitFor(t, 30*time.Second, "the initial ADDED line for w0", hasEvent("ADDED", "w0"))

	k.Run(t, "create", "configmap", "w1", "-n", ns, "--from-literal=v=1")
	w.WaitFor(t, 30*time.Second, "an ADDED line for w1", hasEvent("ADDED", "w1"))

	k.Run(t, "patch", "configmap", "w1", "-n", ns, "--type=merge", "-p", `{"data":{"v":"2"}}`)
	w.WaitFor(t, 30*time.Second, "a MODIFIED line for w1", hasEvent("MODIFIED", "w1"))

	k.Run(t, "delete", "configmap", "w1", "-n", ns)
	w.WaitFor(t, 30*time.Second, "a DELETED line for w1", hasEvent("DELETED", "w1"))

	header := framework.Table(w.Stdout())[0]
	if header[0] != "EVENT" || header[1] != "NAME" {
		t.Fatalf("expected the watch table header to start with EVENT NAME, got %v\n%s", header, w.Stdout())
	}
	w.Stop()
}

// TestKubectlSelectors checks label and field selectors.
func TestKubectlSelectors(t *testing.T) {
	s := server(t)
	_, k := s.NewCluster(t, "e2e-sel")
	const ns = "sel"
	k.Run(t, "create", "namespace", ns)
	for name, color := range map[string]string{"red-1": "red", "red-2": "red", "blue-1": "blue"} {
		k.Run(t, "create", "configmap", name, "-n", ns)
		framework.RequireContains(t, k.Run(t, "label", "configmap", name, "-n", ns, "color="+color), "labeled", "kubectl label")
	}

	check := func(what string, want []string, args ...string) {
		t.Helper()
		got := framework.Names(k.Run(t, append([]string{"get", "configmaps", "-n", ns, "-o", "name"}, args...)...))
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("%s (kubectl get configmaps %s): got %v, want %v", what, strings.Join(args, " "), got, want)
		}
	}
	check("equality label selector", []string{"configmap/red-1", "configmap/red-2"}, "-l", "color=red")
	check("set-based label selector", []string{"configmap/blue-1"}, "-l", "color in (blue)")
	check("existence label selector", []string{"configmap/blue-1", "configmap/red-1", "configmap/red-2"}, "-l", "color")
	check("field selector on metadata.name", []string{"configmap/red-2"}, "--field-selector", "metadata.name=red-2")
	check("field selector and label selector", nil, "--field-selector", "metadata.name=red-2", "-l", "color=blue")

	out := k.Run(t, "get", "configmaps", "-n", ns, "-l", "color!=red", "-o", "name")
	if strings.Contains(out, "red-") || !strings.Contains(out, "configmap/blue-1") {
		t.Fatalf("-l color!=red should list blue-1 and no red-*, got:\n%s", out)
	}

	// An empty result is reported like kube does.
	_, stderr, err := k.RunErr(t, "get", "configmaps", "-n", ns, "-l", "color=green")
	if err != nil {
		t.Fatalf("an empty selection is not an error, got %v: %s", err, stderr)
	}
	framework.RequireContains(t, stderr, "No resources found", "kubectl get with no match")

	// Invalid field selectors are rejected by the server.
	out, stderr, err = k.RunErr(t, "get", "configmaps", "-n", ns, "--field-selector", "spec.bogus=1")
	framework.RequireFails(t, out, stderr, err, "unsupported field selector spec.bogus")
}

// TestKubectlDiscovery checks api-resources, api-versions and explain.
func TestKubectlDiscovery(t *testing.T) {
	s := server(t)
	_, k := s.NewCluster(t, "e2e-disc")

	out := k.Run(t, "api-resources")
	rows := framework.Table(out)
	find := func(name string) []string {
		for _, r := range rows {
			if r[0] == name {
				return r
			}
		}
		t.Fatalf("kubectl api-resources does not list %s:\n%s", name, out)
		return nil
	}
	if cm := find("configmaps"); len(cm) < 2 || cm[1] != "cm" {
		t.Fatalf("configmaps should have the short name cm, got row %v", cm)
	}
	if crd := find("customresourcedefinitions"); !strings.Contains(strings.Join(crd, " "), "apiextensions.k8s.io/v1") {
		t.Fatalf("customresourcedefinitions should be in apiextensions.k8s.io/v1, got row %v", crd)
	}
	find("namespaces")
	find("secrets")
	find("roles")

	rbac := framework.Names(k.Run(t, "api-resources", "--api-group=rbac.authorization.k8s.io", "-o", "name"))
	for _, want := range []string{"clusterrolebindings.rbac.authorization.k8s.io", "clusterroles.rbac.authorization.k8s.io",
		"rolebindings.rbac.authorization.k8s.io", "roles.rbac.authorization.k8s.io"} {
		if !slices.Contains(rbac, want) {
			t.Fatalf("kubectl api-resources --api-group=rbac.authorization.k8s.io: missing %s in %v", want, rbac)
		}
	}

	versions := framework.Names(k.Run(t, "api-versions"))
	for _, want := range []string{"v1", "rbac.authorization.k8s.io/v1", "apiextensions.k8s.io/v1", "coordination.k8s.io/v1"} {
		if !slices.Contains(versions, want) {
			t.Fatalf("kubectl api-versions: missing %s in %v", want, versions)
		}
	}

	out = k.Run(t, "explain", "configmap.data")
	for _, want := range []string{"KIND:", "ConfigMap", "FIELD:", "data", "map[string]string"} {
		framework.RequireContains(t, out, want, "kubectl explain configmap.data")
	}
	out = k.Run(t, "explain", "configmaps")
	for _, want := range []string{"ConfigMap", "binaryData", "immutable"} {
		framework.RequireContains(t, out, want, "kubectl explain configmaps")
	}
}

// TestKubectlAuthCanI checks that the shard admin is allowed everything.
func TestKubectlAuthCanI(t *testing.T) {
	s := server(t)
	_, k := s.NewCluster(t, "e2e-cani")
	k.Run(t, "create", "namespace", "cani")
	framework.RequireEqual(t, strings.TrimSpace(k.Run(t, "auth", "can-i", "create", "configmaps", "-n", "cani")), "yes", "kubectl auth can-i create configmaps")
	framework.RequireEqual(t, strings.TrimSpace(k.Run(t, "auth", "can-i", "delete", "namespaces")), "yes", "kubectl auth can-i delete namespaces")
	framework.RequireEqual(t, strings.TrimSpace(k.Run(t, "auth", "can-i", "*", "*")), "yes", "kubectl auth can-i '*' '*'")
}

// TestKubectlDryRunAndValidation checks --dry-run=server and --validate=strict.
func TestKubectlDryRunAndValidation(t *testing.T) {
	s := server(t)
	_, k := s.NewCluster(t, "e2e-dry")
	const ns = "dry"
	k.Run(t, "create", "namespace", ns)

	out := k.Run(t, "create", "configmap", "dry", "-n", ns, "--from-literal=a=b", "--dry-run=server")
	framework.RequireContains(t, out, "configmap/dry created (server dry run)", "kubectl create --dry-run=server")
	out = k.Run(t, "create", "configmap", "dry", "-n", ns, "--from-literal=a=b", "--dry-run=server", "-o", "json")
	var dry corev1.ConfigMap
	if err := json.Unmarshal([]byte(out), &dry); err != nil {
		t.Fatalf("decoding the dry-run object: %v\n%s", err, out)
	}
	framework.RequireEqual(t, dry.Data["a"], "b", "data of the dry-run object")

	manifest := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: dry-applied\n  namespace: %s\ndata:\n  k: v\n", ns)
	framework.RequireContains(t, k.RunStdin(t, manifest, "apply", "--dry-run=server", "-f", "-"), "(server dry run)", "kubectl apply --dry-run=server")

	got := framework.Names(k.Run(t, "get", "configmaps", "-n", ns, "-o", "name"))
	if slices.Contains(got, "configmap/dry") || slices.Contains(got, "configmap/dry-applied") {
		t.Fatalf("--dry-run=server must not store anything, but the namespace has %v", got)
	}
	out, stderr, err := k.RunErr(t, "get", "configmap", "dry", "-n", ns)
	framework.RequireFails(t, out, stderr, err, "get after a server dry run", "not found")

	// An unknown field is rejected with --validate=strict ...
	bogus := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: strict\n  namespace: %s\nbogusField: true\ndata:\n  a: b\n", ns)
	out, stderr, err = k.RunStdinErr(t, bogus, "apply", "--validate=strict", "-f", "-")
	framework.RequireFails(t, out, stderr, err, "apply --validate=strict with an unknown field", "unknown field", "bogusField")
	out, stderr, err = k.RunErr(t, "get", "configmap", "strict", "-n", ns)
	framework.RequireFails(t, out, stderr, err, "get after a rejected strict apply", "not found")

	// ... and dropped with --validate=false.
	k.RunStdin(t, bogus, "apply", "--validate=false", "-f", "-")
	out = k.Run(t, "get", "configmap", "strict", "-n", ns, "-o", "json")
	var stored map[string]any
	if err := json.Unmarshal([]byte(out), &stored); err != nil {
		t.Fatalf("decoding configmap strict: %v\n%s", err, out)
	}
	if _, ok := stored["bogusField"]; ok {
		t.Fatalf("the unknown field should have been dropped, got:\n%s", out)
	}
}
