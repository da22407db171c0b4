package apibinding

import (
	"context"
	"strings"
	"testing"
	"time"

	apisv1alpha1 "github.com/kcp-dev/sdk/apis/apis/v1alpha1"
	apisv1alpha2 "github.com/kcp-dev/sdk/apis/apis/v1alpha2"
	conditionsv1alpha1 "github.com/kcp-dev/sdk/apis/third_party/conditions/apis/conditions/v1alpha1"
	"github.com/kcp-dev/sdk/apis/third_party/conditions/util/conditions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/meshplane/meshplane/core/internal/apiexport"
)

func TestBindingReconciler(t *testing.T) {
	schemaObj := &apisv1alpha1.APIResourceSchema{
		ObjectMeta: metav1.ObjectMeta{Name: "v1.widgets.example.io", UID: "s1"},
		Spec: apisv1alpha1.APIResourceSchemaSpec{Group: "example.io", Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"},
			Versions: []apisv1alpha1.APIResourceVersion{{Name: "v1", Served: true, Storage: true,
				Schema: runtimeRaw(`{"type":"object","x-kubernetes-preserve-unknown-fields":true}`)}}},
	}
	export := func(identity string) *apisv1alpha2.APIExport {
		return &apisv1alpha2.APIExport{ObjectMeta: metav1.ObjectMeta{Name: "widgets"},
			Spec: apisv1alpha2.APIExportSpec{Resources: []apisv1alpha2.ResourceSchema{
				{Name: "widgets", Group: "example.io", Schema: schemaObj.Name, Storage: apisv1alpha2.ResourceSchemaStorage{CRD: &apisv1alpha2.ResourceSchemaStorageCRD{}}}}},
			Status: apisv1alpha2.APIExportStatus{IdentityHash: identity}}
	}
	crd := func(plural, kind string) *apiextensionsv1.CustomResourceDefinition {
		return &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: plural + ".example.io"},
			Spec: apiextensionsv1.CustomResourceDefinitionSpec{Group: "example.io", Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: plural, Kind: kind}}}
	}
	own := []*apiextensionsv1.CustomResourceDefinition{crd("widgets", "Widget")}
	boundBy := func(binding string, c *apiextensionsv1.CustomResourceDefinition) map[string][]*apiextensionsv1.CustomResourceDefinition {
		return map[string][]*apiextensionsv1.CustomResourceDefinition{binding: {c}}
	}
	other := &apisv1alpha2.APIBinding{ObjectMeta: metav1.ObjectMeta{Name: "other"},
		Spec:   apisv1alpha2.APIBindingSpec{Reference: apisv1alpha2.BindingReference{Export: &apisv1alpha2.ExportBindingReference{Path: "root:p2", Name: "widgets"}}},
		Status: apisv1alpha2.APIBindingStatus{BoundResources: []apisv1alpha2.BoundAPIResource{{Group: "example.io", Resource: "widgets"}}}}
	gizmos := other.DeepCopy()
	gizmos.Status.BoundResources[0].Resource = "gizmos"
	tests := []struct {
		name        string
		path        string
		export      *apisv1alpha2.APIExport // nil: not found
		own         []*apiextensionsv1.CustomResourceDefinition
		bound       map[string][]*apiextensionsv1.CustomResourceDefinition
		bindings    []*apisv1alpha2.APIBinding
		wasBound    bool // the binding's status lists widgets
		wantMessage string
		wantServe   bool
		wantPhase   apisv1alpha2.APIBindingPhaseType
		wantReason  string // reason of the failing condition
		wantRequeue time.Duration
	}{
		{name: "bound", export: export("id1"), wantServe: true, wantPhase: apisv1alpha2.APIBindingPhaseBound},
		{name: "bound again (its own resources)", export: export("id1"), bound: boundBy("widgets", crd("widgets", "Widget")), wantServe: true,
			wantPhase: apisv1alpha2.APIBindingPhaseBound},
		{name: "unknown workspace", path: "root:nope", export: export("id1"), wantPhase: apisv1alpha2.APIBindingPhaseBinding,
			wantReason: apisv1alpha2.APIExportNotFoundReason, wantRequeue: 5 * time.Second},
		{name: "unknown export", wantPhase: apisv1alpha2.APIBindingPhaseBinding,
			wantReason: apisv1alpha2.APIExportNotFoundReason, wantRequeue: 5 * time.Second},
		{name: "no identity yet", export: export(""), wantPhase: apisv1alpha2.APIBindingPhaseBinding,
			wantReason: "IdentityPending", wantRequeue: time.Second},
		{name: "resource held by a CRD", export: export("id1"), own: own, wantPhase: apisv1alpha2.APIBindingPhaseBinding,
			wantReason: apisv1alpha2.NamingConflictsReason, wantRequeue: 10 * time.Second,
			wantMessage: "Unable to bind APIs because they are bound by other APIBindings or CRDs: map[widgets.example.io:{ true}]"},
		{name: "resource served by another binding", export: export("id1"), bound: boundBy("other", crd("widgets", "Widget")), bindings: []*apisv1alpha2.APIBinding{other},
			wantPhase: apisv1alpha2.APIBindingPhaseBinding, wantReason: apisv1alpha2.NamingConflictsReason, wantRequeue: 10 * time.Second,
			wantMessage: "Unable to bind APIs because they are bound by other APIBindings or CRDs: map[widgets.example.io:{other false}]"},
		{name: "resource another binding had bound (after a restart)", export: export("id1"), bindings: []*apisv1alpha2.APIBinding{other},
			wantPhase: apisv1alpha2.APIBindingPhaseBinding, wantReason: apisv1alpha2.NamingConflictsReason, wantRequeue: 10 * time.Second,
			wantMessage: "map[widgets.example.io:{other false}]"},
		{name: "both had it bound: the one served keeps it", export: export("id1"), bindings: []*apisv1alpha2.APIBinding{other}, wasBound: true,
			wantServe: true, wantPhase: apisv1alpha2.APIBindingPhaseBound},
		{name: "kind of a CRD", export: export("id1"), own: []*apiextensionsv1.CustomResourceDefinition{crd("gizmos", "Widget")},
			wantPhase: apisv1alpha2.APIBindingPhaseBinding, wantReason: apisv1alpha2.NamingConflictsReason, wantRequeue: 10 * time.Second,
			wantMessage: `Unable to bind APIs: naming conflict with CustomResourceDefinition "gizmos.example.io": spec.names.kind=Widget is forbidden`},
		{name: "kind of another binding's resource", export: export("id1"), bound: boundBy("other", crd("gizmos", "Widget")), bindings: []*apisv1alpha2.APIBinding{gizmos},
			wantPhase: apisv1alpha2.APIBindingPhaseBinding, wantReason: apisv1alpha2.NamingConflictsReason, wantRequeue: 10 * time.Second,
			wantMessage: `Unable to bind APIs: naming conflict with APIBinding "other" bound to APIExport root:p2:widgets: spec.names.kind=Widget is forbidden`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &bindingReconciler{
				resolve: func(path string) (string, bool) { return "provider", path == "root:provider" },
				path:    func(cluster string) string { return "root:" + cluster },
				getExport: func(_ context.Context, cluster, name string) (*apisv1alpha2.APIExport, error) {
					if tt.export == nil || name != "widgets" {
						return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "apiexports"}, name)
					}
					return tt.export, nil
				},
				getSchema: func(_ context.Context, _, name string) (*apisv1alpha1.APIResourceSchema, error) {
					return schemaObj, nil
				},
				conflicts: conflictChecker{
					own:      func(string) []*apiextensionsv1.CustomResourceDefinition { return tt.own },
					bound:    func(string) map[string][]*apiextensionsv1.CustomResourceDefinition { return tt.bound },
					bindings: func(string) []*apisv1alpha2.APIBinding { return tt.bindings },
				},
			}
			path := tt.path
			if path == "" {
				path = "root:provider"
			}
			b := &apisv1alpha2.APIBinding{ObjectMeta: metav1.ObjectMeta{Name: "widgets"},
				Spec:   apisv1alpha2.APIBindingSpec{Reference: apisv1alpha2.BindingReference{Export: &apisv1alpha2.ExportBindingReference{Path: path, Name: "widgets"}}},
				Status: apisv1alpha2.APIBindingStatus{Phase: apisv1alpha2.APIBindingPhaseBinding}}
			if tt.wasBound {
				b.Status.BoundResources = []apisv1alpha2.BoundAPIResource{{Group: "example.io", Resource: "widgets"}}
			}
			requeue, crds := r.reconcile(context.Background(), "consumer", b)
			if requeue != tt.wantRequeue {
				t.Errorf("requeue = %v, want %v", requeue, tt.wantRequeue)
			}
			if (len(crds) > 0) != tt.wantServe {
				t.Fatalf("CRDs to serve = %v, want serving %v", crds, tt.wantServe)
			}
			if b.Status.Phase != tt.wantPhase {
				t.Errorf("phase = %q, want %q", b.Status.Phase, tt.wantPhase)
			}
			if tt.wantServe {
				if len(crds) != 1 || crds[0].Annotations[apiexport.IdentityAnnotation] != "id1" {
					t.Errorf("served CRDs = %v, want widgets.example.io under identity id1", crds)
				}
				if b.Status.APIExportClusterName != "provider" || len(b.Status.BoundResources) != 1 ||
					b.Status.BoundResources[0].Schema.IdentityHash != "id1" {
					t.Errorf("status = %+v, want one resource bound from provider with identity id1", b.Status)
				}
				if !conditions.IsTrue(b, "Ready") {
					t.Errorf("Ready is not true: %v", b.Status.Conditions)
				}
				return
			}
			found := false
			for _, c := range b.Status.Conditions {
				if c.Reason == tt.wantReason && strings.Contains(c.Message, tt.wantMessage) {
					found = true
				}
			}
			if !found {
				t.Errorf("conditions %v carry no reason %q with message %q", b.Status.Conditions, tt.wantReason, tt.wantMessage)
			}
		})
	}
}

// TestBindingReconcilerServesWhatItCan checks kcp's partial binding: of
// an export of gadgets, widgets and sprockets, widgets held by a CRD of
// the consumer is skipped and the others are served; a clash of names at
// sprockets serves what comes before it only. The binding reports
// NamingConflicts and is not Ready either way.
func TestBindingReconcilerServesWhatItCan(t *testing.T) {
	schemaOf := func(plural, kind string) *apisv1alpha1.APIResourceSchema {
		return &apisv1alpha1.APIResourceSchema{
			ObjectMeta: metav1.ObjectMeta{Name: "v1." + plural + ".example.io", UID: types.UID(plural)},
			Spec: apisv1alpha1.APIResourceSchemaSpec{Group: "example.io", Scope: apiextensionsv1.NamespaceScoped,
				Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: plural, Singular: strings.ToLower(kind), Kind: kind, ListKind: kind + "List"},
				Versions: []apisv1alpha1.APIResourceVersion{{Name: "v1", Served: true, Storage: true,
					Schema: runtimeRaw(`{"type":"object","x-kubernetes-preserve-unknown-fields":true}`)}}},
		}
	}
	schemas := map[string]*apisv1alpha1.APIResourceSchema{}
	export := &apisv1alpha2.APIExport{ObjectMeta: metav1.ObjectMeta{Name: "things"}, Status: apisv1alpha2.APIExportStatus{IdentityHash: "id1"}}
	for _, r := range [][2]string{{"gadgets", "Gadget"}, {"widgets", "Widget"}, {"sprockets", "Sprocket"}, {"cogs", "Cog"}} {
		sch := schemaOf(r[0], r[1])
		schemas[sch.Name] = sch
		export.Spec.Resources = append(export.Spec.Resources, apisv1alpha2.ResourceSchema{Name: r[0], Group: "example.io", Schema: sch.Name,
			Storage: apisv1alpha2.ResourceSchemaStorage{CRD: &apisv1alpha2.ResourceSchemaStorageCRD{}}})
	}
	crd := func(plural, kind string) *apiextensionsv1.CustomResourceDefinition {
		return &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: plural + ".example.io"},
			Spec: apiextensionsv1.CustomResourceDefinitionSpec{Group: "example.io", Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: plural, Kind: kind}}}
	}
	for _, tt := range []struct {
		name        string
		own         []*apiextensionsv1.CustomResourceDefinition
		wantServed  string
		wantMessage string
	}{
		{name: "a resource held by a CRD", own: []*apiextensionsv1.CustomResourceDefinition{crd("widgets", "Widget")},
			wantServed: "gadgets,sprockets,cogs", wantMessage: "Unable to bind APIs because they are bound by other APIBindings or CRDs: map[widgets.example.io:{ true}]"},
		{name: "a clash of names", own: []*apiextensionsv1.CustomResourceDefinition{crd("gears", "Sprocket")},
			wantServed: "gadgets,widgets", wantMessage: `Unable to bind APIs: naming conflict with CustomResourceDefinition "gears.example.io": spec.names.kind=Sprocket is forbidden`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := &bindingReconciler{
				resolve:   func(string) (string, bool) { return "provider", true },
				path:      func(cluster string) string { return "root:" + cluster },
				getExport: func(context.Context, string, string) (*apisv1alpha2.APIExport, error) { return export, nil },
				getSchema: func(_ context.Context, _, name string) (*apisv1alpha1.APIResourceSchema, error) {
					return schemas[name], nil
				},
				conflicts: conflictChecker{
					own:      func(string) []*apiextensionsv1.CustomResourceDefinition { return tt.own },
					bound:    func(string) map[string][]*apiextensionsv1.CustomResourceDefinition { return nil },
					bindings: func(string) []*apisv1alpha2.APIBinding { return nil },
				},
			}
			b := &apisv1alpha2.APIBinding{ObjectMeta: metav1.ObjectMeta{Name: "things"},
				Spec:   apisv1alpha2.APIBindingSpec{Reference: apisv1alpha2.BindingReference{Export: &apisv1alpha2.ExportBindingReference{Path: "root:provider", Name: "things"}}},
				Status: apisv1alpha2.APIBindingStatus{Phase: apisv1alpha2.APIBindingPhaseBinding}}
			_, crds := r.reconcile(context.Background(), "consumer", b)
			var served, bound []string
			for _, c := range crds {
				served = append(served, c.Spec.Names.Plural)
			}
			for _, br := range b.Status.BoundResources {
				bound = append(bound, br.Resource)
			}
			if strings.Join(served, ",") != tt.wantServed || strings.Join(bound, ",") != tt.wantServed {
				t.Errorf("served %v, bound resources %v, want %s", served, bound, tt.wantServed)
			}
			if b.Status.Phase != apisv1alpha2.APIBindingPhaseBinding {
				t.Errorf("phase %q, want Binding", b.Status.Phase)
			}
			for _, ct := range []string{"BindingUpToDate", "InitialBindingCompleted", "Ready"} {
				c := conditions.Get(b, conditionsv1alpha1.ConditionType(ct))
				if c == nil || c.Status != "False" || c.Reason != apisv1alpha2.NamingConflictsReason || c.Message != tt.wantMessage {
					t.Errorf("condition %s = %+v, want False, NamingConflicts, %q", ct, c, tt.wantMessage)
				}
			}
		})
	}
}

func runtimeRaw(s string) runtime.RawExtension { return runtime.RawExtension{Raw: []byte(s)} }
