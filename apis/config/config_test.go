package config

import (
	"context"
	"encoding/json"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	crdvalidation "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	corev1alpha1 "github.com/meshplane/meshplane/apis/core/v1alpha1"
)

const group = corev1alpha1.GroupName

type column struct{ name, jsonPath string }

// want lists what each CRD must look like.
var want = map[string]struct {
	kind, singular string
	columns        []column
}{
	"accounts": {"Account", "account", []column{
		{"Type", ".spec.type"},
		{"Display Name", ".spec.displayName"},
		{"Ready", `.status.conditions[?(@.type=="Ready")].status`},
		{"Age", ".metadata.creationTimestamp"},
	}},
	"accountinfos": {"AccountInfo", "accountinfo", []column{
		{"Account", ".spec.account.name"},
		{"Organization", ".spec.organization.name"},
		{"Path", ".spec.account.path"},
		{"Age", ".metadata.creationTimestamp"},
	}},
	"stores": {"Store", "store", []column{
		{"Store ID", ".status.storeId"},
		{"Model ID", ".status.authorizationModelId"},
		{"Ready", `.status.conditions[?(@.type=="Ready")].status`},
		{"Age", ".metadata.creationTimestamp"},
	}},
	"authorizationmodels": {"AuthorizationModel", "authorizationmodel", []column{
		{"Store", ".spec.storeRef.name"},
		{"Cluster", ".spec.storeRef.cluster"},
		{"Ready", `.status.conditions[?(@.type=="Ready")].status`},
		{"Age", ".metadata.creationTimestamp"},
	}},
	"roleassignments": {"RoleAssignment", "roleassignment", []column{
		{"Kind", ".spec.subject.kind"},
		{"Subject", ".spec.subject.name"},
		{"Role", ".spec.role"},
		{"Ready", `.status.conditions[?(@.type=="Ready")].status`},
		{"Age", ".metadata.creationTimestamp"},
	}},
	"invites": {"Invite", "invite", []column{
		{"Email", ".spec.email"},
		{"User", ".spec.user"},
		{"Role", ".spec.role"},
		{"State", `.status.conditions[?(@.type=="Accepted")].reason`},
		{"Accepted By", ".status.acceptedBy"},
		{"Expires", ".status.expiresAt"},
		{"Age", ".metadata.creationTimestamp"},
	}},
}

// loadCRDs decodes the embedded CRDs strictly (an unknown field fails) and
// defaults them as the API server would.
func loadCRDs(t *testing.T) map[string]*apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	objs, err := CRDs()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*apiextensionsv1.CustomResourceDefinition{}
	for _, u := range objs {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(u.Object, crd, true); err != nil {
			t.Fatalf("CRD %s does not decode strictly: %v", u.GetName(), err)
		}
		apiextensionsv1.SetObjectDefaults_CustomResourceDefinition(crd)
		out[crd.Spec.Names.Plural] = crd
	}
	return out
}

func internalCRD(t *testing.T, crd *apiextensionsv1.CustomResourceDefinition) *apiextensions.CustomResourceDefinition {
	t.Helper()
	out := &apiextensions.CustomResourceDefinition{}
	if err := apiextensionsv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(crd, out, nil); err != nil {
		t.Fatal(err)
	}
	return out
}

// openAPISchema returns the schema of the only version of an internal CRD
// (the conversion from v1 moves a schema shared by all versions to
// spec.validation).
func openAPISchema(crd *apiextensions.CustomResourceDefinition) *apiextensions.JSONSchemaProps {
	if v := crd.Spec.Versions[0].Schema; v != nil {
		return v.OpenAPIV3Schema
	}
	return crd.Spec.Validation.OpenAPIV3Schema
}

func TestCRDs(t *testing.T) {
	crds := loadCRDs(t)
	if len(crds) != len(want) {
		t.Errorf("got %d CRDs, want %d", len(crds), len(want))
	}
	for plural, w := range want {
		crd := crds[plural]
		if crd == nil {
			t.Errorf("no CRD for %s", plural)
			continue
		}
		if crd.Name != plural+"."+group || crd.Spec.Group != group {
			t.Errorf("%s: name %s, group %s", plural, crd.Name, crd.Spec.Group)
		}
		if n := crd.Spec.Names; n.Kind != w.kind || n.ListKind != w.kind+"List" || n.Singular != w.singular {
			t.Errorf("%s: names %+v", plural, n)
		}
		if crd.Spec.Scope != apiextensionsv1.ClusterScoped {
			t.Errorf("%s: scope %s, want Cluster", plural, crd.Spec.Scope)
		}
		if len(crd.Spec.Versions) != 1 {
			t.Fatalf("%s: %d versions, want 1", plural, len(crd.Spec.Versions))
		}
		v := crd.Spec.Versions[0]
		if v.Name != corev1alpha1.Version || !v.Served || !v.Storage {
			t.Errorf("%s: version %s served=%v storage=%v", plural, v.Name, v.Served, v.Storage)
		}
		if v.Subresources == nil || v.Subresources.Status == nil {
			t.Errorf("%s: no status subresource", plural)
		}
		var got []column
		for _, c := range v.AdditionalPrinterColumns {
			got = append(got, column{c.Name, c.JSONPath})
		}
		if !reflect.DeepEqual(got, w.columns) {
			t.Errorf("%s: printer columns %v, want %v", plural, got, w.columns)
		}

		// The checks kube-apiserver runs on a CRD create: among them, the
		// schema must be structural.
		in := internalCRD(t, crd)
		in.Status.StoredVersions = []string{v.Name}
		if errs := crdvalidation.ValidateCustomResourceDefinition(context.Background(), in); len(errs) > 0 {
			t.Errorf("%s: the API server would reject the CRD: %v", plural, errs.ToAggregate())
		}
		s, err := structuralschema.NewStructural(openAPISchema(in))
		if err != nil {
			t.Fatalf("%s: %v", plural, err)
		}
		if errs := structuralschema.ValidateStructural(nil, s); len(errs) > 0 {
			t.Errorf("%s: schema is not structural: %v", plural, errs.ToAggregate())
		}
	}
}

// Platform Mesh's field paths: each must be in our schema, so that objects
// written by Platform Mesh's operators survive pruning.
var platformMeshFields = map[string][]string{
	"accounts": {
		"spec.type", "spec.displayName", "spec.description", "spec.creator", "spec.data",
		"status.conditions", "status.observedGeneration", "status.nextReconcileTime",
	},
	"accountinfos": {
		"spec.fga.store.id", "spec.clusterInfo.ca", "spec.oidc.issuerUrl", "spec.oidc.clients",
		"spec.account.name", "spec.account.generatedClusterId", "spec.account.originClusterId",
		"spec.account.path", "spec.account.url", "spec.account.type",
		"spec.parentAccount.name", "spec.parentAccount.generatedClusterId", "spec.parentAccount.originClusterId",
		"spec.parentAccount.path", "spec.parentAccount.url", "spec.parentAccount.type",
		"spec.organization.name", "spec.organization.generatedClusterId", "spec.organization.originClusterId",
		"spec.organization.path", "spec.organization.url", "spec.organization.type",
		"status",
	},
	"stores": {
		"spec.coreModule", "spec.tuples.object", "spec.tuples.relation", "spec.tuples.user",
		"status.storeId", "status.authorizationModelId", "status.conditions",
		"status.managedTuples.object", "status.managedTuples.relation", "status.managedTuples.user",
	},
	"authorizationmodels": {
		"spec.storeRef.name", "spec.storeRef.cluster", "spec.storeRef.path", "spec.model",
		"spec.tuples.object", "spec.tuples.relation", "spec.tuples.user",
		"status.conditions", "status.managedTuples.user",
	},
}

func TestPlatformMeshFieldNames(t *testing.T) {
	crds := loadCRDs(t)
	for plural, paths := range platformMeshFields {
		root := crds[plural].Spec.Versions[0].Schema.OpenAPIV3Schema
		for _, p := range paths {
			s := root
			for _, seg := range strings.Split(p, ".") {
				if s.Type == "array" && s.Items != nil && s.Items.Schema != nil {
					s = s.Items.Schema
				}
				next, ok := s.Properties[seg]
				if !ok {
					t.Errorf("%s: schema has no %s (missing %q)", plural, p, seg)
					break
				}
				s = &next
			}
		}
	}
	// spec.data takes any JSON and is kept as it is.
	data := crds["accounts"].Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["data"]
	if data.XPreserveUnknownFields == nil || !*data.XPreserveUnknownFields || data.Type != "" {
		t.Errorf("spec.data: type %q, x-kubernetes-preserve-unknown-fields %v; want free-form JSON", data.Type, data.XPreserveUnknownFields)
	}
}

func validator(t *testing.T, crd *apiextensionsv1.CustomResourceDefinition) (validation.SchemaValidator, *structuralschema.Structural) {
	t.Helper()
	in := internalCRD(t, crd)
	v, _, err := validation.NewSchemaValidator(openAPISchema(in))
	if err != nil {
		t.Fatal(err)
	}
	s, err := structuralschema.NewStructural(openAPISchema(in))
	if err != nil {
		t.Fatal(err)
	}
	return v, s
}

func obj(t *testing.T, kind, spec string) map[string]any {
	t.Helper()
	var m map[string]any
	doc := `{"apiVersion":"core.platform-mesh.io/v1alpha1","kind":"` + kind + `","metadata":{"name":"x"},"spec":` + spec + `}`
	if err := json.Unmarshal([]byte(doc), &m); err != nil {
		t.Fatalf("%s: %v", doc, err)
	}
	return m
}

func TestSchemaValidation(t *testing.T) {
	crds := loadCRDs(t)
	loc := func(name string) string {
		return `{"name":"` + name + `","generatedClusterId":"a","originClusterId":"b","path":"root:orgs:` + name + `","url":"https://h/clusters/a","type":"org"}`
	}
	tests := []struct {
		name, plural, kind, spec string
		wantErr                  string // a field path in the error; "" for valid
	}{
		{"account", "accounts", "Account", `{"type":"org","displayName":"ACME"}`, ""},
		{"account with everything", "accounts", "Account", `{"type":"account","displayName":"A","description":"d","creator":"alice","data":{"k":["v",1,{"x":null}]}}`, ""},
		{"account data not an object", "accounts", "Account", `{"type":"org","displayName":"A","data":["any","json"]}`, ""},
		{"display name of 255 characters", "accounts", "Account", `{"type":"org","displayName":"` + strings.Repeat("x", 255) + `"}`, ""},
		{"display name of 256 characters", "accounts", "Account", `{"type":"org","displayName":"` + strings.Repeat("x", 256) + `"}`, "spec.displayName"},
		{"no display name", "accounts", "Account", `{"type":"org"}`, "spec.displayName"},
		{"no type", "accounts", "Account", `{"displayName":"A"}`, "spec.type"},
		{"unknown type", "accounts", "Account", `{"type":"folder","displayName":"A"}`, "spec.type"},

		{"account info", "accountinfos", "AccountInfo", `{"fga":{"store":{"id":"s"}},"account":` + loc("a") + `,"organization":` + loc("o") + `,"clusterInfo":{"ca":"pem"}}`, ""},
		{"account info with parent and oidc", "accountinfos", "AccountInfo", `{"fga":{"store":{"id":"s"}},"account":` + loc("a") + `,"parentAccount":` + loc("p") + `,"organization":` + loc("o") + `,"clusterInfo":{"ca":"pem"},"oidc":{"issuerUrl":"https://i","clients":{"c":{"clientId":"id"}}}}`, ""},
		{"account info without organization", "accountinfos", "AccountInfo", `{"fga":{"store":{"id":"s"}},"account":` + loc("a") + `,"clusterInfo":{"ca":"pem"}}`, "spec.organization"},
		{"account location without cluster id", "accountinfos", "AccountInfo", `{"fga":{"store":{"id":"s"}},"account":{"name":"a","originClusterId":"b","path":"p","url":"u","type":"org"},"organization":` + loc("o") + `,"clusterInfo":{"ca":"pem"}}`, "spec.account.generatedClusterId"},

		{"store", "stores", "Store", `{"coreModule":"module core","tuples":[{"object":"a:b","relation":"r","user":"user:u"}]}`, ""},
		{"store without core module", "stores", "Store", `{}`, "spec.coreModule"},
		{"tuple without user", "stores", "Store", `{"coreModule":"m","tuples":[{"object":"a:b","relation":"r"}]}`, "spec.tuples[0].user"},

		{"authorization model", "authorizationmodels", "AuthorizationModel", `{"storeRef":{"name":"acme","cluster":"root:orgs"},"model":"module m"}`, ""},
		{"store ref without cluster", "authorizationmodels", "AuthorizationModel", `{"storeRef":{"name":"acme"},"model":"module m"}`, "spec.storeRef.cluster"},
		{"no model", "authorizationmodels", "AuthorizationModel", `{"storeRef":{"name":"acme","cluster":"c"}}`, "spec.model"},

		{"role assignment", "roleassignments", "RoleAssignment", `{"subject":{"kind":"User","name":"bob"},"role":"member"}`, ""},
		{"role assignment of a custom role", "roleassignments", "RoleAssignment", `{"subject":{"kind":"User","name":"oidc:bob@example.com"},"role":"widget_viewer"}`, ""},
		{"role assignment without role", "roleassignments", "RoleAssignment", `{"subject":{"kind":"User","name":"bob"}}`, "spec.role"},
		{"role that is no relation name", "roleassignments", "RoleAssignment", `{"subject":{"kind":"User","name":"bob"},"role":"owner#assignee"}`, "spec.role"},
		{"subject of an unknown kind", "roleassignments", "RoleAssignment", `{"subject":{"kind":"ServiceAccount","name":"bob"},"role":"member"}`, "spec.subject.kind"},
		{"subject without name", "roleassignments", "RoleAssignment", `{"subject":{"kind":"User","name":""},"role":"member"}`, "spec.subject.name"},

		{"invite by email (Platform Mesh's)", "invites", "Invite", `{"email":"bob@example.com"}`, ""},
		{"invite by user with role and expiry", "invites", "Invite", `{"user":"oidc:carol","role":"owner","expiresAt":"2030-01-01T00:00:00Z"}`, ""},
		// (exactly one of email and user is a CEL rule: the server checks
		// it, TestInvitations.)
		{"invite to no e-mail address", "invites", "Invite", `{"email":"bob"}`, "spec.email"},
		{"invite with a role that is no relation name", "invites", "Invite", `{"user":"bob","role":"owner#assignee"}`, "spec.role"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, _ := validator(t, crds[tt.plural])
			errs := validation.ValidateCustomResource(nil, obj(t, tt.kind, tt.spec), v)
			switch {
			case tt.wantErr == "" && len(errs) > 0:
				t.Errorf("want valid, got %v", errs.ToAggregate())
			case tt.wantErr != "" && len(errs) == 0:
				t.Errorf("want an error on %s, got none", tt.wantErr)
			case tt.wantErr != "" && !strings.Contains(errs.ToAggregate().Error(), tt.wantErr):
				t.Errorf("want an error on %s, got %v", tt.wantErr, errs.ToAggregate())
			}
		})
	}
}

// Pruning drops unknown fields but keeps everything under spec.data.
func TestPruning(t *testing.T) {
	crds := loadCRDs(t)
	_, s := validator(t, crds["accounts"])
	o := obj(t, "Account", `{"type":"org","displayName":"A","bogus":1,"data":{"deep":{"any":["thing"]}}}`)
	pruning.Prune(o, s, true)
	spec := o["spec"].(map[string]any)
	if _, ok := spec["bogus"]; ok {
		t.Error("spec.bogus survived pruning")
	}
	if !reflect.DeepEqual(spec["data"], map[string]any{"deep": map[string]any{"any": []any{"thing"}}}) {
		t.Errorf("spec.data after pruning = %v", spec["data"])
	}
}

var schemaName = regexp.MustCompile(`^v[0-9]{6}-[0-9a-f]{8}\.([a-z]+)\.core\.platform-mesh\.io$`)

// The APIResourceSchemas carry exactly what the CRDs say, and the APIExport
// exports each of them.
func TestAPIResourceSchemasMatchCRDs(t *testing.T) {
	crds := loadCRDs(t)
	schemas, err := APIResourceSchemas()
	if err != nil {
		t.Fatal(err)
	}
	if len(schemas) != len(crds) {
		t.Errorf("%d APIResourceSchemas for %d CRDs", len(schemas), len(crds))
	}
	exported := map[string]string{} // plural -> schema name
	for _, s := range schemas {
		if s.GetAPIVersion() != "apis.kcp.io/v1alpha1" {
			t.Errorf("%s: apiVersion %s", s.GetName(), s.GetAPIVersion())
		}
		m := schemaName.FindStringSubmatch(s.GetName())
		if m == nil {
			t.Errorf("schema name %q is not v<date>-<hash>.<plural>.%s", s.GetName(), group)
			continue
		}
		plural := m[1]
		exported[plural] = s.GetName()
		crd := crds[plural]
		if crd == nil {
			t.Errorf("schema %s has no CRD", s.GetName())
			continue
		}
		spec := s.Object["spec"].(map[string]any)
		if spec["group"] != crd.Spec.Group || spec["scope"] != string(crd.Spec.Scope) {
			t.Errorf("%s: group %v scope %v, CRD has %s %s", s.GetName(), spec["group"], spec["scope"], crd.Spec.Group, crd.Spec.Scope)
		}
		if !reflect.DeepEqual(spec["names"], generic(t, crd.Spec.Names)) {
			t.Errorf("%s: names %v, CRD has %+v", s.GetName(), spec["names"], crd.Spec.Names)
		}
		versions := spec["versions"].([]any)
		if len(versions) != len(crd.Spec.Versions) {
			t.Fatalf("%s: %d versions, CRD has %d", s.GetName(), len(versions), len(crd.Spec.Versions))
		}
		for i, raw := range versions {
			v, cv := raw.(map[string]any), crd.Spec.Versions[i]
			if v["name"] != cv.Name || v["served"] != cv.Served || v["storage"] != cv.Storage {
				t.Errorf("%s: version %v served %v storage %v, CRD has %s %v %v", s.GetName(), v["name"], v["served"], v["storage"], cv.Name, cv.Served, cv.Storage)
			}
			if !reflect.DeepEqual(v["schema"], generic(t, cv.Schema.OpenAPIV3Schema)) {
				t.Errorf("%s %s: openAPIV3 schema differs from the CRD's", s.GetName(), cv.Name)
			}
			if !reflect.DeepEqual(v["additionalPrinterColumns"], generic(t, cv.AdditionalPrinterColumns)) {
				t.Errorf("%s %s: printer columns %v differ from the CRD's", s.GetName(), cv.Name, v["additionalPrinterColumns"])
			}
			if !reflect.DeepEqual(v["subresources"], generic(t, cv.Subresources)) {
				t.Errorf("%s %s: subresources %v differ from the CRD's", s.GetName(), cv.Name, v["subresources"])
			}
		}
	}

	export, err := APIExport()
	if err != nil {
		t.Fatal(err)
	}
	if export.GetName() != ExportName || export.GetAPIVersion() != "apis.kcp.io/v1alpha2" {
		t.Errorf("export %s %s, want %s apis.kcp.io/v1alpha2", export.GetAPIVersion(), export.GetName(), ExportName)
	}
	resources, _, _ := unstructured.NestedSlice(export.Object, "spec", "resources")
	got := map[string]string{}
	for _, r := range resources {
		r := r.(map[string]any)
		if r["group"] != group {
			t.Errorf("export resource %v: group %v", r["name"], r["group"])
		}
		if _, crd := r["storage"].(map[string]any)["crd"]; !crd {
			t.Errorf("export resource %v: storage is not crd", r["name"])
		}
		got[r["name"].(string)] = r["schema"].(string)
	}
	if !reflect.DeepEqual(got, exported) {
		t.Errorf("export resources %v, want %v", got, exported)
	}
	claims, _, _ := unstructured.NestedSlice(export.Object, "spec", "permissionClaims")
	var claimed []string
	for _, c := range claims {
		c := c.(map[string]any)
		g, _ := c["group"].(string)
		claimed = append(claimed, g+"/"+c["resource"].(string))
		if verbs, _ := c["verbs"].([]any); len(verbs) == 0 {
			t.Errorf("claim %v has no verbs", c)
		}
	}
	if w := []string{"/namespaces", "tenancy.kcp.io/workspaces", "tenancy.kcp.io/workspacetypes"}; !reflect.DeepEqual(claimed, w) {
		t.Errorf("permission claims %v, want %v", claimed, w)
	}
}

// generic turns v into the map/slice form that YAML decoding produces.
func generic(t *testing.T, v any) any {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestDecode(t *testing.T) {
	docs, err := Decode([]byte("---\n# comment only\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n"))
	if err != nil || len(docs) != 1 || docs[0].GetName() != "a" {
		t.Errorf("Decode = %v, %v; want one ConfigMap a", docs, err)
	}
	if _, err := Decode([]byte("metadata: {name: a}\n")); err == nil {
		t.Error("Decode accepted a document without apiVersion and kind")
	}
}
