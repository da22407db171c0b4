package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestConfigMapsCRUD lists, gets, creates, updates (merge patch), applies
// (server-side apply) and deletes configmaps through GraphQL as a user,
// and checks each step with kubectl.
func TestConfigMapsCRUD(t *testing.T) {
	t.Parallel()
	s := framework.SharedServer(t)
	ws := userWorkspace(t, s, "gql-cm", "alice")
	c := newClient(t, ws.Path, s.UserToken(t, "alice"))
	k := s.KubectlFor(ws.Path)

	// dryRun creates nothing.
	c.must(t, `mutation { v1 { createConfigMap(namespace: "default", dryRun: true, object: {metadata: {name: "dry"}}) { metadata { name } } } }`, nil)
	if out, _, err := k.RunErr(t, "get", "configmap", "dry", "-n", "default"); err == nil {
		t.Fatalf("a dryRun create left configmap dry behind: %s", out)
	}

	d := c.must(t, `mutation($obj: ConfigMapInput!) { v1 { createConfigMap(namespace: "default", object: $obj) { metadata { name namespace labels } data } } }`,
		map[string]any{"obj": map[string]any{"metadata": map[string]any{"name": "one", "labels": map[string]any{"app": "gql"}}, "data": map[string]any{"k": "v"}}})
	framework.RequireEqual(t, at(d, "v1", "createConfigMap", "data", "k"), any("v"), "the created configmap's data as GraphQL returns it")
	framework.RequireEqual(t, strings.TrimSpace(k.Run(t, "get", "configmap", "one", "-n", "default", "-o", "jsonpath={.data.k}")), "v", "the created configmap as kubectl sees it")

	d = c.must(t, `{ v1 { ConfigMap(name: "one", namespace: "default") { metadata { name labels } data } ConfigMapYaml(name: "one", namespace: "default") } }`, nil)
	framework.RequireEqual(t, at(d, "v1", "ConfigMap", "metadata", "labels", "app"), any("gql"), "get: labels")
	framework.RequireContains(t, at(d, "v1", "ConfigMapYaml").(string), "name: one", "get as YAML")

	k.Run(t, "create", "configmap", "two", "-n", "default", "--from-literal=a=b")
	d = c.must(t, `{ v1 { ConfigMaps(namespace: "default", labelselector: "app=gql") { items { kind apiVersion metadata { name generation } } continue } } }`, nil)
	framework.RequireEqual(t, fmt.Sprint(at(d, "v1", "ConfigMaps", "items")), "[map[apiVersion:v1 kind:ConfigMap metadata:map[generation:<nil> name:one]]]", "list with a label selector")
	d = c.must(t, `{ v1 { ConfigMaps(namespace: "default", limit: 1, sortBy: "metadata.name") { items { metadata { name } } continue } } }`, nil)
	cont, _ := at(d, "v1", "ConfigMaps", "continue").(string)
	if cont == "" {
		t.Fatalf("a list with limit 1 of several configmaps returned no continue token: %v", d)
	}
	d = c.must(t, `query($c: String) { v1 { ConfigMaps(namespace: "default", limit: 1, continue: $c) { items { metadata { name } } } } }`, map[string]any{"c": cont})
	if n := len(at(d, "v1", "ConfigMaps", "items").([]any)); n != 1 {
		t.Fatalf("the second page holds %d items, want 1: %v", n, d)
	}

	d = c.must(t, `mutation { v1 { updateConfigMap(name: "one", namespace: "default", object: {data: {k2: "v2"}}) { data } } }`, nil)
	framework.RequireEqual(t, fmt.Sprint(at(d, "v1", "updateConfigMap", "data")), "map[k:v k2:v2]", "merge patch keeps k and adds k2")

	d = c.must(t, `mutation { v1 { applyConfigMap(name: "three", namespace: "default", fieldManager: "e2e", object: {data: {x: "1"}}) { metadata { managedFields { manager operation } } data } } }`, nil)
	framework.RequireEqual(t, fmt.Sprint(at(d, "v1", "applyConfigMap", "metadata", "managedFields", 0)), "map[manager:e2e operation:Apply]", "server-side apply's field manager")
	framework.RequireEqual(t, strings.TrimSpace(k.Run(t, "get", "configmap", "three", "-n", "default", "-o", "jsonpath={.data.x}")), "1", "the applied configmap as kubectl sees it")

	// owners follows metadata.ownerReferences one level.
	uid := strings.TrimSpace(k.Run(t, "get", "configmap", "three", "-n", "default", "-o", "jsonpath={.metadata.uid}"))
	c.must(t, `mutation($uid: String) { v1 { createConfigMap(namespace: "default", object: {metadata: {name: "owned", ownerReferences: [{apiVersion: "v1", kind: "ConfigMap", name: "three", uid: $uid}]}}) { metadata { name } } } }`, map[string]any{"uid": uid})
	d = c.must(t, `{ v1 { ConfigMap(name: "owned", namespace: "default") { metadata { ownerReferences { name } } owners { __typename ... on ConfigMap { data } } } } }`, nil)
	framework.RequireEqual(t, fmt.Sprint(at(d, "v1", "ConfigMap", "owners", 0)), "map[__typename:ConfigMap data:map[x:1]]", "the owner through owners ("+fmt.Sprint(d)+")")

	c.must(t, `mutation { v1 { deleteConfigMap(name: "one", namespace: "default", dryRun: true) } }`, nil)
	k.Run(t, "get", "configmap", "one", "-n", "default")
	d = c.must(t, `mutation { v1 { deleteConfigMap(name: "one", namespace: "default") } }`, nil)
	framework.RequireEqual(t, at(d, "v1", "deleteConfigMap"), any(true), "delete")
	d = c.must(t, `{ v1 { ConfigMap(name: "one", namespace: "default") { metadata { name } } } }`, nil)
	if at(d, "v1", "ConfigMap") != nil {
		t.Fatalf("configmap one still readable after delete: %v", d)
	}
}

const widgetCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.gql.example.dev
spec:
  group: gql.example.dev
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}
  versions:
  - name: v1alpha1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: string, enum: [Small, Large]}
              replicas: {type: integer}
              port: {x-kubernetes-int-or-string: true}
              memory: {x-kubernetes-int-or-string: true, anyOf: [{type: integer}, {type: string}]}
              tags: {type: object, additionalProperties: {type: string}}
              configMapRef:
                type: object
                properties:
                  name: {type: string}
`

// TestBoundAPI binds a custom API into a workspace whose schema the
// gateway already serves: the new API appears in introspection within
// seconds, and its objects can be created, read, updated, applied and
// deleted, with the configMapRef relation followed.
func TestBoundAPI(t *testing.T) {
	t.Parallel()
	s := framework.SharedServer(t)
	provider := s.CreateOrg(t, "gql-provider")
	s.ExportCRD(t, provider, widgetCRD, "gql.example.dev")
	consumer := userWorkspace(t, s, "gql-consumer", "alice")
	c := newClient(t, consumer.Path, s.UserToken(t, "alice"))

	hasWidgets := func() bool {
		d := c.must(t, `{ __schema { queryType { fields { name } } } }`, nil)
		return strings.Contains(fmt.Sprint(d), "gql_example_dev")
	}
	if hasWidgets() {
		t.Fatal("the schema has gql_example_dev before the binding")
	}
	s.Bind(t, consumer, "widgets", provider, "gql.example.dev", nil)
	bound := time.Now()
	framework.Eventually(t, 30*time.Second, 200*time.Millisecond, "the bound API to appear in the schema", func() (bool, string) {
		return hasWidgets(), "no gql_example_dev field on Query yet"
	})
	t.Logf("the bound API appeared in the schema %v after the binding was Bound", time.Since(bound).Round(10*time.Millisecond))

	d := c.must(t, `{ __type(name: "Widget") { fields { name } } spec: __type(name: "WidgetSpec") { fields { name type { name kind } } } }`, nil)
	framework.RequireContains(t, fmt.Sprint(at(d, "spec")), "map[name:size type:map[kind:ENUM name:WidgetSpecSize]]", "the enum field")
	framework.RequireContains(t, fmt.Sprint(at(d, "spec")), "map[name:port type:map[kind:SCALAR name:IntOrString]]", "the int-or-string field")
	framework.RequireContains(t, fmt.Sprint(at(d, "spec")), "map[name:tags type:map[kind:SCALAR name:StringMap]]", "the map field")

	s.KubectlFor(consumer.Path).Run(t, "create", "configmap", "widget-config", "-n", "default", "--from-literal=color=blue")
	d = c.must(t, `mutation { gql_example_dev { v1alpha1 {
		createWidget(namespace: "default", object: {metadata: {name: "w1"}, spec: {size: Small, replicas: 2, port: "http", tags: {a: "b"}, configMapRef: {name: "widget-config"}}}) { metadata { name } spec { size replicas port tags } }
	} } }`, nil)
	framework.RequireEqual(t, fmt.Sprint(at(d, "gql_example_dev", "v1alpha1", "createWidget", "spec")), "map[port:http replicas:2 size:Small tags:map[a:b]]", "the created widget")
	framework.RequireEqual(t, strings.TrimSpace(s.KubectlFor(consumer.Path).Run(t, "get", "widgets", "w1", "-n", "default", "-o", "jsonpath={.spec.size}")), "Small", "the widget as kubectl sees it")

	d = c.must(t, `{ gql_example_dev { v1alpha1 {
		Widgets(namespace: "default") { items { metadata { name } spec { size } } }
		Widget(name: "w1", namespace: "default") { spec { configMap { data } } }
	} } }`, nil)
	framework.RequireEqual(t, fmt.Sprint(at(d, "gql_example_dev", "v1alpha1", "Widgets", "items")), "[map[metadata:map[name:w1] spec:map[size:Small]]]", "the list of widgets")
	framework.RequireEqual(t, fmt.Sprint(at(d, "gql_example_dev", "v1alpha1", "Widget", "spec", "configMap")), "map[data:map[color:blue]]", "the configMapRef relation")
	d = c.must(t, docBlock(t, "graphql-widgets"), nil)
	framework.RequireContains(t, fmt.Sprint(d), "configMap:map[data:map[color:blue]]", "the docs' widget example")

	d = c.must(t, `mutation { gql_example_dev { v1alpha1 {
		updateWidget(name: "w1", namespace: "default", object: {spec: {size: Large}}) { spec { size replicas } }
		applyWidget(name: "w2", namespace: "default", object: {spec: {replicas: 5}}) { spec { replicas } }
	} } }`, nil)
	framework.RequireEqual(t, fmt.Sprint(at(d, "gql_example_dev", "v1alpha1")), "map[applyWidget:map[spec:map[replicas:5]] updateWidget:map[spec:map[replicas:2 size:Large]]]", "update and apply of widgets")
	d = c.must(t, `mutation { gql_example_dev { v1alpha1 { a: deleteWidget(name: "w1", namespace: "default") b: deleteWidget(name: "w2", namespace: "default") } } }`, nil)
	framework.RequireEqual(t, fmt.Sprint(at(d, "gql_example_dev", "v1alpha1")), "map[a:true b:true]", "delete of widgets")
}

// TestAuthentication: no token is 401; another user's workspace stays
// closed; an unknown token is refused.
func TestAuthentication(t *testing.T) {
	t.Parallel()
	s := framework.SharedServer(t)
	ws := userWorkspace(t, s, "gql-auth", "alice")
	s.KubectlFor(ws.Path).Run(t, "create", "configmap", "secret-ish", "-n", "default", "--from-literal=k=v")

	r := newClient(t, ws.Path, "").do(t, `{ v1 { ConfigMaps { items { metadata { name } } } } }`, nil)
	framework.RequireEqual(t, r.Status, http.StatusUnauthorized, "status without a token ("+r.String()+")")

	r = newClient(t, ws.Path, "not-a-token").do(t, `{ v1 { ConfigMaps { items { metadata { name } } } } }`, nil)
	framework.RequireEqual(t, r.Status, http.StatusUnauthorized, "status with an unknown token ("+r.String()+")")

	r = newClient(t, ws.Path, s.UserToken(t, "bob")).do(t, `{ v1 { ConfigMaps(namespace: "default") { items { metadata { name } data } } } }`, nil)
	if strings.Contains(r.Raw, "secret-ish") || (r.Status == 200 && len(r.Errors) == 0) {
		t.Fatalf("bob read alice's workspace: %s", r)
	}
	framework.RequireContains(t, strings.ToLower(r.Raw), "forbidden", "bob's answer")
	// The core denies bob the workspace itself, so he does not even get
	// its schema.
	framework.RequireEqual(t, r.Status, http.StatusForbidden, "status of bob's request ("+r.String()+")")
	r = newClient(t, ws.Path, s.UserToken(t, "bob")).do(t, `{ __schema { queryType { name } } }`, nil)
	framework.RequireEqual(t, r.Status, http.StatusForbidden, "status of bob's introspection ("+r.String()+")")

	r = newClient(t, ws.Path, s.UserToken(t, "alice")).do(t, `{ v1 { ConfigMaps(namespace: "default") { items { metadata { name } } } } }`, nil)
	framework.RequireContains(t, r.Raw, "secret-ish", "alice's own list")
}

// TestLimits: depth, complexity and batch limits answer with clear errors.
func TestLimits(t *testing.T) {
	t.Parallel()
	s := framework.SharedServer(t)
	c := newClient(t, "root", s.AdminToken(t))

	// Fragments count by what they expand to; six levels pass.
	c.must(t, `query { v1 { Namespaces { items { metadata { ...M } } } } }
	fragment M on ObjectMeta { managedFields { manager } ownerReferences { name } }`, nil)

	// Introspection does not count towards the depth limit.
	r := c.do(t, `{ __schema { types { name } } }`, nil)
	if len(r.Errors) > 0 {
		t.Fatalf("introspection was refused: %s", r)
	}

	// Complexity: many aliased lists.
	var b strings.Builder
	b.WriteString("{ v1 {")
	for i := 0; i < 30; i++ {
		fmt.Fprintf(&b, " l%d: ConfigMaps(limit: 100) { items { metadata { name } } }", i)
	}
	b.WriteString(" } }")
	r = c.do(t, b.String(), nil)
	if len(r.Errors) == 0 || !strings.Contains(r.Errors[0].Message, "complexity") {
		t.Fatalf("a query of complexity > 1000 was not refused with a complexity error: %s", r)
	}
	t.Logf("complexity error: %s", r.Errors[0].Message)

	// Batch: 10 operations run, 11 are refused.
	ops := make([]map[string]any, 11)
	for i := range ops {
		ops[i] = map[string]any{"query": "{ __typename }"}
	}
	r = c.post(t, ops[:10])
	framework.RequireEqual(t, r.Status, 200, "a batch of 10 ("+r.String()+")")
	framework.RequireEqual(t, strings.Count(r.Raw, `"__typename":"Query"`), 10, "answers in a batch of 10 ("+r.String()+")")
	r = c.post(t, ops)
	framework.RequireEqual(t, r.Status, 400, "a batch of 11 ("+r.String()+")")
	framework.RequireContains(t, r.Raw, "more than the limit of 10", "a batch of 11")
}

// TestDepthLimit binds an API with deeply nested objects: a query 11
// levels deep is refused with a message naming the limit of 10.
func TestDepthLimit(t *testing.T) {
	t.Parallel()
	s := framework.SharedServer(t)
	ws := userWorkspace(t, s, "gql-depth", "alice")
	provider := s.CreateOrg(t, "gql-deep")
	s.ExportCRD(t, provider, deepCRD, "deep.example.dev")
	s.Bind(t, ws, "deep", provider, "deep.example.dev", nil)
	c := newClient(t, ws.Path, s.UserToken(t, "alice"))
	q := `{ deep_example_dev { v1 { Deeps { items { spec { a { b { c { d { e { f } } } } } } } } } } }`
	var r *gqlResponse
	framework.Eventually(t, 30*time.Second, 250*time.Millisecond, "the deep API in the schema", func() (bool, string) {
		r = c.do(t, q, nil)
		return !strings.Contains(r.Raw, "Cannot query field"), r.String()
	})
	if len(r.Errors) == 0 || !strings.Contains(r.Errors[0].Message, "more than the limit of 10") {
		t.Fatalf("a query 12 levels deep was not refused with a depth error: %s", r)
	}
	t.Logf("depth error: %s", r.Errors[0].Message)
}

const deepCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: deeps.deep.example.dev
spec:
  group: deep.example.dev
  scope: Namespaced
  names: {plural: deeps, singular: deep, kind: Deep, listKind: DeepList}
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
            properties:
              a:
                type: object
                properties:
                  b:
                    type: object
                    properties:
                      c:
                        type: object
                        properties:
                          d:
                            type: object
                            properties:
                              e:
                                type: object
                                properties:
                                  f: {type: string}
`
