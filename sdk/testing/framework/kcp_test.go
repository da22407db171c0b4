package framework_test

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

const gadgetCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gadgets.kit.meshplane.io
spec:
  group: kit.meshplane.io
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
          spec: {type: object, properties: {size: {type: string}}}
`

// TestAPISharing goes through the kit's API sharing helpers the way a
// provider's tests would: an organization with a provider and a consumer,
// a CRD exported with apigen, a binding, and the consumer's object seen
// through the endpoint slice's virtual workspace.
func TestAPISharing(t *testing.T) {
	s := framework.SharedServer(t)
	org := s.CreateOrg(t, "kit-apis")
	ws := s.CreateWorkspaces(t, org.Path, "provider", "consumer")
	provider, consumer := ws[0], ws[1]

	if id := s.ExportCRD(t, provider, gadgetCRD, "kit.meshplane.io"); id == "" {
		t.Fatalf("ExportCRD returned an empty identity")
	}
	s.Bind(t, consumer, "gadgets", provider, "kit.meshplane.io", nil)

	gadgets := schema.GroupVersionResource{Group: "kit.meshplane.io", Version: "v1", Resource: "gadgets"}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kit.meshplane.io/v1", "kind": "Gadget",
		"metadata": map[string]any{"name": "g1", "namespace": "default"},
		"spec":     map[string]any{"size": "small"},
	}}
	if _, err := s.Dynamic(t, consumer.Path).Resource(gadgets).Namespace("default").Create(framework.CallContext(t), obj, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating a Gadget in the consumer %s: %v", consumer, err)
	}

	url := s.EndpointSliceURL(t, provider, "kit.meshplane.io")
	vw := framework.DynamicFor(t, s.VirtualWorkspaceRESTConfig(t, url, "*"))
	list, err := vw.Resource(gadgets).List(framework.CallContext(t), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("listing gadgets through the virtual workspace %s: %v", url, err)
	}
	if len(list.Items) != 1 || list.Items[0].GetAnnotations()[framework.ClusterAnnotation] != consumer.Cluster {
		t.Fatalf("gadgets through the virtual workspace: want g1 of %s, got %s", consumer, framework.Compact(list.Items))
	}
}
