package kcpbench

import (
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Resources the benchmark uses.
var (
	WorkspacesGVR    = schema.GroupVersionResource{Group: "tenancy.kcp.io", Version: "v1alpha1", Resource: "workspaces"}
	SchemasGVR       = schema.GroupVersionResource{Group: "apis.kcp.io", Version: "v1alpha1", Resource: "apiresourceschemas"}
	ExportsGVR       = schema.GroupVersionResource{Group: "apis.kcp.io", Version: "v1alpha2", Resource: "apiexports"}
	BindingsGVR      = schema.GroupVersionResource{Group: "apis.kcp.io", Version: "v1alpha2", Resource: "apibindings"}
	EndpointSliceGVR = schema.GroupVersionResource{Group: "apis.kcp.io", Version: "v1alpha1", Resource: "apiexportendpointslices"}
	NamespacesGVR    = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	WidgetsGVR       = schema.GroupVersionResource{Group: WidgetGroup, Version: "v1", Resource: "widgets"}
)

// Names of the exported API.
const (
	WidgetGroup = "bench.meshplane.io"
	SchemaName  = "v1.widgets." + WidgetGroup
	ExportName  = WidgetGroup
	BindingName = WidgetGroup

	// CreatedAnnotation carries a widget's client-side creation time
	// (RFC 3339 with nanoseconds).
	CreatedAnnotation = WidgetGroup + "/created"

	createdByLabel = "app.kubernetes.io/created-by"
	createdByValue = "meshplane-bench"
)

// Phases of Workspace and APIBinding status.
const (
	PhaseReady = "Ready"
	PhaseBound = "Bound"
)

func newObject(apiVersion, kind, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": apiVersion,
		"kind":       kind,
		"metadata": map[string]any{
			"name":   name,
			"labels": map[string]any{createdByLabel: createdByValue},
		},
	}}
	return u
}

// Workspace returns a Workspace of type root:<typeName>.
func Workspace(name, typeName string) *unstructured.Unstructured {
	u := newObject("tenancy.kcp.io/v1alpha1", "Workspace", name)
	u.Object["spec"] = map[string]any{"type": map[string]any{"name": typeName, "path": "root"}}
	return u
}

// Namespace returns a core/v1 Namespace.
func Namespace(name string) *unstructured.Unstructured {
	return newObject("v1", "Namespace", name)
}

// APIResourceSchema returns the widgets schema (namespaced, v1 with a
// status subresource, any content).
func APIResourceSchema() *unstructured.Unstructured {
	u := newObject("apis.kcp.io/v1alpha1", "APIResourceSchema", SchemaName)
	u.Object["spec"] = map[string]any{
		"group": WidgetGroup,
		"names": map[string]any{
			"plural":   "widgets",
			"singular": "widget",
			"kind":     "Widget",
			"listKind": "WidgetList",
		},
		"scope": "Namespaced",
		"versions": []any{map[string]any{
			"name":    "v1",
			"served":  true,
			"storage": true,
			"schema": map[string]any{
				"type":                                 "object",
				"x-kubernetes-preserve-unknown-fields": true,
			},
			"subresources": map[string]any{"status": map[string]any{}},
		}},
	}
	return u
}

// APIExport returns the widgets export (v1alpha2, CRD storage).
func APIExport() *unstructured.Unstructured {
	u := newObject("apis.kcp.io/v1alpha2", "APIExport", ExportName)
	u.Object["spec"] = map[string]any{
		"resources": []any{map[string]any{
			"name":    "widgets",
			"group":   WidgetGroup,
			"schema":  SchemaName,
			"storage": map[string]any{"crd": map[string]any{}},
		}},
	}
	return u
}

// APIBinding returns a binding of the widgets export in providerPath.
func APIBinding(providerPath string) *unstructured.Unstructured {
	u := newObject("apis.kcp.io/v1alpha2", "APIBinding", BindingName)
	u.Object["spec"] = map[string]any{
		"reference": map[string]any{
			"export": map[string]any{"path": providerPath, "name": ExportName},
		},
	}
	return u
}

// Widget returns a widget in namespace ns stamped with created.
func Widget(name, ns string, created time.Time) *unstructured.Unstructured {
	u := newObject(WidgetGroup+"/v1", "Widget", name)
	u.SetNamespace(ns)
	u.SetAnnotations(map[string]string{CreatedAnnotation: created.UTC().Format(time.RFC3339Nano)})
	u.Object["spec"] = map[string]any{"size": int64(1), "color": "blue"}
	return u
}

// Phase returns status.phase.
func Phase(u *unstructured.Unstructured) string {
	s, _, _ := unstructured.NestedString(u.Object, "status", "phase")
	return s
}

// SetPhase sets status.phase (for tests).
func SetPhase(u *unstructured.Unstructured, phase string) {
	_ = unstructured.SetNestedField(u.Object, phase, "status", "phase")
}

// IdentityHash returns an APIExport's status.identityHash.
func IdentityHash(u *unstructured.Unstructured) string {
	s, _, _ := unstructured.NestedString(u.Object, "status", "identityHash")
	return s
}

// EndpointURL returns status.endpoints[0].url of an
// APIExportEndpointSlice, or "".
func EndpointURL(u *unstructured.Unstructured) string {
	eps, _, _ := unstructured.NestedSlice(u.Object, "status", "endpoints")
	if len(eps) == 0 {
		return ""
	}
	ep, ok := eps[0].(map[string]any)
	if !ok {
		return ""
	}
	s, _ := ep["url"].(string)
	return s
}
