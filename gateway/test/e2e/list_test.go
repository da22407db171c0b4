package e2e

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestListsMatchREST lists built-in kinds through GraphQL (the gateway
// reads them from the core as protobuf and keeps what the selection reads)
// and compares every selected value with the core's JSON as kubectl gets
// it: maps, base64 bytes, times with seconds and microseconds, nested
// lists, fragments and aliases over the same members, and a relation
// (which needs whole objects).
func TestListsMatchREST(t *testing.T) {
	t.Parallel()
	s := framework.SharedServer(t)
	ws := userWorkspace(t, s, "gql-lists", "alice")
	c := newClient(t, ws.Path, s.UserToken(t, "alice"))
	k := s.KubectlFor(ws.Path)
	k.RunStdin(t, `
apiVersion: v1
kind: ConfigMap
metadata: {name: one, namespace: default, labels: {app: lm, z: z1}, annotations: {note: "<&> ünïcode \"quoted\""}}
data: {a: "1", b: "two\nlines"}
binaryData: {bin: AAECAwQ=}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: two, namespace: default, labels: {app: lm}}
---
apiVersion: v1
kind: Secret
metadata: {name: s1, namespace: default, labels: {app: lm}}
type: Opaque
data: {password: c2VjcmV0}
immutable: true
---
apiVersion: events.k8s.io/v1
kind: Event
metadata: {name: e1, namespace: default, labels: {app: lm}}
eventTime: "2026-01-02T03:04:05.123456Z"
reportingController: example.dev/ctl
reportingInstance: ctl-1
action: Reconcile
reason: Tested
note: a note
type: Normal
regarding: {kind: ConfigMap, name: one, namespace: default, apiVersion: v1}
deprecatedFirstTimestamp: "2026-01-02T03:04:05Z"
deprecatedCount: 3
`, "apply", "-f", "-")

	cases := []struct{ name, query, kubectl string }{
		{"configmaps", `{ v1 { ConfigMaps(namespace: "default", labelselector: "app=lm") { items {
			metadata { name namespace uid resourceVersion labels annotations creationTimestamp generation
				managedFields { manager operation apiVersion time fieldsType fieldsV1 } }
			m2: metadata { name labels }
			...F data binaryData immutable } } } }
			fragment F on ConfigMap { metadata { uid finalizers } kind apiVersion }`, "configmaps"},
		{"secrets", `{ v1 { Secrets(namespace: "default", labelselector: "app=lm") { items { metadata { name } data type immutable } } } }`, "secrets"},
		{"events", `{ events_k8s_io { v1 { Events(namespace: "default", labelselector: "app=lm") { items {
			metadata { name creationTimestamp } eventTime reportingController reportingInstance action reason note type
			regarding { kind name namespace apiVersion } deprecatedFirstTimestamp deprecatedCount series { count } } } } } }`, "events.v1.events.k8s.io"},
		{"configmaps with a relation", `{ v1 { ConfigMaps(namespace: "default", labelselector: "app=lm") { items { metadata { name } data owners { __typename } } } } }`, "configmaps"},
	}
	for _, tc := range cases {
		d := c.must(t, tc.query, nil)
		var list any
		for _, v := range d {
			list = v
		}
		for {
			m, ok := list.(map[string]any)
			if !ok || m["items"] != nil {
				break
			}
			for _, v := range m {
				list = v
			}
		}
		items, _ := at(list, "items").([]any)
		var rest struct{ Items []any }
		if err := json.Unmarshal([]byte(k.Run(t, "get", tc.kubectl, "-n", "default", "-l", "app=lm", "-o", "json", "--show-managed-fields")), &rest); err != nil {
			t.Fatal(err)
		}
		if len(items) == 0 || len(items) != len(rest.Items) {
			t.Fatalf("%s: GraphQL listed %d items, kubectl %d: %v", tc.name, len(items), len(rest.Items), d)
		}
		for i := range items {
			if err := matches(items[i], rest.Items[i], ""); err != nil {
				t.Fatalf("%s: item %d: %v\nGraphQL: %v\nREST: %v", tc.name, i, err, items[i], rest.Items[i])
			}
		}
	}
}

// matches checks that every value GraphQL returned equals the REST
// object's member of the same name (null for a missing one); aliases m2
// read metadata. owners is a relation, not a member.
func matches(g, r any, path string) error {
	gm, ok := g.(map[string]any)
	if !ok {
		if gl, ok := g.([]any); ok {
			rl, _ := r.([]any)
			if len(gl) != len(rl) {
				return fmt.Errorf("%s: %d items, REST %d", path, len(gl), len(rl))
			}
			for i := range gl {
				if err := matches(gl[i], rl[i], fmt.Sprintf("%s[%d]", path, i)); err != nil {
					return err
				}
			}
			return nil
		}
		if !reflect.DeepEqual(g, r) {
			return fmt.Errorf("%s: GraphQL %#v, REST %#v", path, g, r)
		}
		return nil
	}
	rm, _ := r.(map[string]any)
	if gm != nil && rm == nil && len(gm) > 0 && r != nil {
		return fmt.Errorf("%s: GraphQL an object, REST %#v", path, r)
	}
	for k, v := range gm {
		if path == "" && k == "owners" {
			continue
		}
		name := k
		if k == "m2" {
			name = "metadata"
		}
		if err := matches(v, rm[name], path+"."+k); err != nil {
			return err
		}
	}
	return nil
}
