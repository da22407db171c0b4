package resources

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

const widgetCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.e2e.meshplane.io
spec:
  group: e2e.meshplane.io
  scope: Namespaced
  names:
    plural: widgets
    singular: widget
    kind: Widget
    listKind: WidgetList
    shortNames: [wd]
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
    additionalPrinterColumns:
    - name: Size
      type: integer
      jsonPath: .spec.size
    - name: Color
      type: string
      jsonPath: .spec.color
    - name: Phase
      type: string
      jsonPath: .status.phase
    - name: Age
      type: date
      jsonPath: .metadata.creationTimestamp
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [size]
            properties:
              size:
                type: integer
                minimum: 1
                maximum: 10
              color:
                type: string
                default: blue
                enum: [blue, red, green]
          status:
            type: object
            properties:
              phase:
                type: string
`

// TestCustomResources covers a namespaced CRD with a status subresource,
// printer columns, defaulting, pruning and validation.
func TestCustomResources(t *testing.T) {
	s := server(t)
	cluster, k := s.NewCluster(t, "e2e-crd")
	const ns = "crd"
	k.Run(t, "create", "namespace", ns)

	framework.RequireContains(t, k.RunStdin(t, widgetCRD, "apply", "-f", "-"),
		"customresourcedefinition.apiextensions.k8s.io/widgets.e2e.meshplane.io created", "creating the CRD")
	k.WaitForCRD(t, "widgets.e2e.meshplane.io", "widgets", ns)
	framework.RequireEqual(t, k.Run(t, "get", "crd", "widgets.e2e.meshplane.io", "-o", "jsonpath={.status.acceptedNames.kind}"), "Widget", "accepted kind of the CRD")
	out := k.Run(t, "explain", "widgets.spec")
	framework.RequireContains(t, out, "size", "kubectl explain widgets.spec")
	framework.RequireContains(t, out, "color", "kubectl explain widgets.spec")

	// Create with a field not in the schema (pruned) and no color (defaulted).
	// --validate=false: kubectl would otherwise reject the unknown field.
	w1 := fmt.Sprintf(`apiVersion: e2e.meshplane.io/v1
kind: Widget
metadata:
  name: w1
  namespace: %s
spec:
  size: 3
  unknownField: drop-me
extraTopLevel: drop-me-too
`, ns)
	framework.RequireContains(t, k.RunStdin(t, w1, "create", "--validate=false", "-f", "-"), "widget.e2e.meshplane.io/w1 created", "creating a Widget")

	var obj map[string]any
	out = k.Run(t, "get", "widget", "w1", "-n", ns, "-o", "json")
	if err := json.Unmarshal([]byte(out), &obj); err != nil {
		t.Fatalf("decoding widget: %v\n%s", err, out)
	}
	spec, _ := obj["spec"].(map[string]any)
	framework.RequireEqual(t, fmt.Sprint(spec["color"]), "blue", "spec.color defaulted from the schema")
	framework.RequireEqual(t, fmt.Sprint(spec["size"]), "3", "spec.size")
	if _, ok := spec["unknownField"]; ok {
		t.Fatalf("spec.unknownField should have been pruned, got spec %v", spec)
	}
	if _, ok := obj["extraTopLevel"]; ok {
		t.Fatalf("extraTopLevel should have been pruned, got %s", out)
	}
	meta, _ := obj["metadata"].(map[string]any)
	annotations, _ := meta["annotations"].(map[string]any)
	framework.RequireEqual(t, fmt.Sprint(annotations[framework.ClusterAnnotation]), cluster, "annotation "+framework.ClusterAnnotation+" of the widget")

	// Printer columns.
	out = k.Run(t, "get", "widgets", "-n", ns)
	header := strings.Join(framework.Table(out)[0], " ")
	if header != "NAME SIZE COLOR PHASE AGE" {
		t.Fatalf("expected the printer columns NAME SIZE COLOR PHASE AGE, got header %q:\n%s", header, out)
	}
	_, cell := framework.TableRow(t, out, "w1")
	framework.RequireEqual(t, cell("SIZE"), "3", "SIZE column")
	framework.RequireEqual(t, cell("COLOR"), "blue", "COLOR column")
	framework.RequireEqual(t, strings.TrimSpace(k.Run(t, "get", "wd", "w1", "-n", ns, "-o", "name")), "widget.e2e.meshplane.io/w1", "get by short name wd")

	// The status subresource.
	framework.RequireContains(t, k.Run(t, "patch", "widget", "w1", "-n", ns, "--subresource=status", "--type=merge", "-p", `{"status":{"phase":"Ready"}}`),
		"widget.e2e.meshplane.io/w1 patched", "kubectl patch --subresource=status")
	jp := func(path string) string {
		return k.Run(t, "get", "widget", "w1", "-n", ns, "-o", "jsonpath={"+path+"}")
	}
	framework.RequireEqual(t, jp(".status.phase"), "Ready", "status.phase after patching /status")
	_, cell = framework.TableRow(t, k.Run(t, "get", "widgets", "-n", ns), "w1")
	framework.RequireEqual(t, cell("PHASE"), "Ready", "PHASE column")

	// With a status subresource, the main resource ignores status changes ...
	k.Run(t, "patch", "widget", "w1", "-n", ns, "--type=merge", "-p", `{"spec":{"size":5},"status":{"phase":"Hacked"}}`)
	framework.RequireEqual(t, jp(".spec.size"), "5", "spec.size after patching the main resource")
	framework.RequireEqual(t, jp(".status.phase"), "Ready", "status.phase must not change through the main resource")
	// ... and /status ignores spec changes.
	k.Run(t, "patch", "widget", "w1", "-n", ns, "--subresource=status", "--type=merge", "-p", `{"spec":{"size":9},"status":{"phase":"Done"}}`)
	framework.RequireEqual(t, jp(".spec.size"), "5", "spec.size must not change through /status")
	framework.RequireEqual(t, jp(".status.phase"), "Done", "status.phase after the second /status patch")

	// Invalid objects are rejected with 422 and not stored.
	tooBig := fmt.Sprintf("apiVersion: e2e.meshplane.io/v1\nkind: Widget\nmetadata:\n  name: too-big\n  namespace: %s\nspec:\n  size: 100\n", ns)
	out, stderr, err := k.RunStdinErr(t, tooBig, "create", "--validate=false", "-f", "-")
	framework.RequireFails(t, out, stderr, err, "creating a Widget with spec.size over the maximum", "is invalid", "spec.size")

	path := fmt.Sprintf("/clusters/%s/apis/e2e.meshplane.io/v1/namespaces/%s/widgets", cluster, ns)
	for name, spec := range map[string]map[string]any{
		"wrong-type":    {"size": "three"},
		"missing-size":  {"color": "red"},
		"not-in-enum":   {"size": 2, "color": "purple"},
		"below-minimum": {"size": 0},
	} {
		body := framework.MustJSON(t, map[string]any{
			"apiVersion": "e2e.meshplane.io/v1",
			"kind":       "Widget",
			"metadata":   map[string]any{"name": name},
			"spec":       spec,
		})
		framework.RequireStatus(t, s.AdminRequest(t, "POST", path, body), "POST of an invalid Widget ("+name+")", 422, "Invalid")
	}
	got := framework.Names(k.Run(t, "get", "widgets", "-n", ns, "-o", "name"))
	framework.RequireEqual(t, strings.Join(got, ","), "widget.e2e.meshplane.io/w1", "widgets stored after the invalid creates")

	// Deleting the CRD deletes its objects and stops serving the resource.
	framework.RequireContains(t, k.Run(t, "delete", "crd", "widgets.e2e.meshplane.io", "--wait=false"), "deleted", "kubectl delete crd")
	framework.Eventually(t, 60*time.Second, time.Second, "the CRD widgets.e2e.meshplane.io to be gone (its instances deleted)", func() (bool, string) {
		out, stderr, err := k.RunErr(t, "get", "crd", "widgets.e2e.meshplane.io", "-o", "jsonpath={.status.conditions}")
		return err != nil && strings.Contains(stderr, "not found"), fmt.Sprintf("conditions=%s err=%v %s", out, err, stderr)
	})
	// kubectl may still hold the resource in its discovery cache, in which
	// case the server answers 404 itself; either way the list must fail.
	out, stderr, err = k.RunErr(t, "get", "widgets", "-n", ns)
	if err == nil || !(strings.Contains(stderr, "the server doesn't have a resource type") ||
		strings.Contains(stderr, "the server could not find the requested resource")) {
		t.Fatalf("listing widgets after deleting the CRD: want the resource to be unknown, got err=%v stdout=%s stderr=%s", err, out, stderr)
	}
}
