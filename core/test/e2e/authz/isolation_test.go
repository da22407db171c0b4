package authz

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// gadgetCRD has the same group and resource in every cluster but a schema
// that depends on sizeType.
func gadgetCRD(sizeType string) string {
	return fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gadgets.e2e.meshplane.io
spec:
  group: e2e.meshplane.io
  scope: Namespaced
  names:
    plural: gadgets
    singular: gadget
    kind: Gadget
    listKind: GadgetList
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
              size:
                type: %s
`, sizeType)
}

func gadget(ns, name, size string) string {
	return fmt.Sprintf("apiVersion: e2e.meshplane.io/v1\nkind: Gadget\nmetadata:\n  name: %s\n  namespace: %s\nspec:\n  size: %s\n", name, ns, size)
}

// TestClusterIsolation checks that two logical clusters are independent and
// that the wildcard endpoint sees both.
func TestClusterIsolation(t *testing.T) {
	s := server(t)
	clusterA, ka := s.NewCluster(t, "e2e-iso-a")
	clusterB, kb := s.NewCluster(t, "e2e-iso-b")
	const ns = "shared"
	label := strings.TrimPrefix(clusterA, "e2e-iso-a-") // unique per run

	for _, c := range []struct {
		name string
		k    *framework.Kubectl
	}{{clusterA, ka}, {clusterB, kb}} {
		c.k.Run(t, "create", "namespace", ns)
		c.k.Run(t, "create", "configmap", "same", "-n", ns, "--from-literal=who="+c.name)
		c.k.Run(t, "label", "configmap", "same", "-n", ns, "e2e-iso="+label)
	}

	t.Run("same configmap name", func(t *testing.T) {
		framework.RequireData(t, ka.GetConfigMap(t, ns, "same"), map[string]string{"who": clusterA}, "configmap same in cluster a")
		framework.RequireData(t, kb.GetConfigMap(t, ns, "same"), map[string]string{"who": clusterB}, "configmap same in cluster b")
		framework.RequireEqual(t, kb.GetConfigMap(t, ns, "same").Annotations[framework.ClusterAnnotation], clusterB, "cluster annotation in b")

		ka.Run(t, "patch", "configmap", "same", "-n", ns, "--type=merge", "-p", `{"data":{"patched":"a"}}`)
		framework.RequireData(t, kb.GetConfigMap(t, ns, "same"), map[string]string{"who": clusterB}, "configmap same in b after patching a")
	})

	t.Run("cluster-scoped objects", func(t *testing.T) {
		ka.Run(t, "create", "namespace", "only-in-a")
		ka.Run(t, "create", "clusterrole", "e2e-only-in-a", "--verb=get", "--resource=configmaps")
		out, stderr, err := kb.RunErr(t, "get", "namespace", "only-in-a")
		framework.RequireFails(t, out, stderr, err, "namespace of cluster a seen from cluster b", `namespaces "only-in-a" not found`)
		out, stderr, err = kb.RunErr(t, "get", "clusterrole", "e2e-only-in-a")
		framework.RequireFails(t, out, stderr, err, "clusterrole of cluster a seen from cluster b", "not found")
		if nss := framework.Names(kb.Run(t, "get", "namespaces", "-o", "name")); slices.Contains(nss, "namespace/only-in-a") {
			t.Fatalf("cluster b lists the namespace of cluster a: %v", nss)
		}
		// A configmap in a namespace that only exists in a cannot be created in b.
		out, stderr, err = kb.RunErr(t, "create", "configmap", "x", "-n", "only-in-a")
		framework.RequireFails(t, out, stderr, err, "configmap in a namespace of cluster a created through cluster b", "not found")
	})

	t.Run("same CRD with different schemas", func(t *testing.T) {
		ka.RunStdin(t, gadgetCRD("integer"), "apply", "-f", "-")
		kb.RunStdin(t, gadgetCRD("string"), "apply", "-f", "-")
		ka.WaitForCRD(t, "gadgets.e2e.meshplane.io", "gadgets", ns)
		kb.WaitForCRD(t, "gadgets.e2e.meshplane.io", "gadgets", ns)

		framework.RequireContains(t, ka.Run(t, "explain", "gadgets.spec.size"), "<integer>", "explain gadgets.spec.size in a")
		framework.RequireContains(t, kb.Run(t, "explain", "gadgets.spec.size"), "<string>", "explain gadgets.spec.size in b")

		ka.RunStdin(t, gadget(ns, "g1", "3"), "create", "-f", "-")
		kb.RunStdin(t, gadget(ns, "g1", `"large"`), "create", "-f", "-")
		out, stderr, err := ka.RunStdinErr(t, gadget(ns, "g2", `"large"`), "create", "--validate=false", "-f", "-")
		framework.RequireFails(t, out, stderr, err, "a string size in cluster a (schema says integer)", "is invalid")
		out, stderr, err = kb.RunStdinErr(t, gadget(ns, "g2", "3"), "create", "--validate=false", "-f", "-")
		framework.RequireFails(t, out, stderr, err, "an integer size in cluster b (schema says string)", "is invalid")

		framework.RequireEqual(t, ka.Run(t, "get", "gadget", "g1", "-n", ns, "-o", "jsonpath={.spec.size}"), "3", "gadget g1 in a")
		framework.RequireEqual(t, kb.Run(t, "get", "gadget", "g1", "-n", ns, "-o", "jsonpath={.spec.size}"), "large", "gadget g1 in b")

		// Deleting the CRD in a leaves b's alone.
		ka.Run(t, "delete", "crd", "gadgets.e2e.meshplane.io", "--wait=false")
		framework.RequireEqual(t, kb.Run(t, "get", "gadget", "g1", "-n", ns, "-o", "jsonpath={.spec.size}"), "large", "gadget g1 in b after deleting the CRD in a")
	})

	t.Run("wildcard list with kubectl", func(t *testing.T) {
		out := s.KubectlFor("*").Run(t, "get", "configmaps", "-A", "-l", "e2e-iso="+label, "-o", "json")
		requireBothClusters(t, out, clusterA, clusterB, "kubectl --server .../clusters/* get configmaps -A")

		raw := s.KubectlFor("").Run(t, "get", "--raw", "/clusters/*/api/v1/configmaps?labelSelector="+url.QueryEscape("e2e-iso="+label))
		requireBothClusters(t, raw, clusterA, clusterB, "kubectl get --raw /clusters/*/api/v1/configmaps")
	})

	t.Run("wildcard watch", func(t *testing.T) {
		watchLabel := "w" + label
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		q := url.Values{"watch": {"true"}, "labelSelector": {"e2e-iso-watch=" + watchLabel}}
		req, err := http.NewRequestWithContext(ctx, "GET", s.BaseURL+"/clusters/*/api/v1/configmaps?"+q.Encode(), nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+s.AdminToken(t))
		resp, err := s.HTTPClient(t).Do(req)
		if err != nil {
			t.Fatalf("starting a wildcard watch: %v", err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("wildcard watch: expected 200, got %d", resp.StatusCode)
		}

		type event struct {
			Type   string           `json:"type"`
			Object corev1.ConfigMap `json:"object"`
		}
		events := make(chan event, 16)
		go func() {
			defer close(events)
			dec := json.NewDecoder(bufio.NewReader(resp.Body))
			for {
				var ev event
				if err := dec.Decode(&ev); err != nil {
					return
				}
				events <- ev
			}
		}()

		for _, k := range []*framework.Kubectl{ka, kb} {
			k.Run(t, "create", "configmap", "watched", "-n", ns)
			k.Run(t, "label", "configmap", "watched", "-n", ns, "e2e-iso-watch="+watchLabel)
		}

		seen := map[string]bool{}
		for !seen[clusterA] || !seen[clusterB] {
			select {
			case ev, ok := <-events:
				if !ok {
					t.Fatalf("the wildcard watch ended before events from both clusters arrived (seen %v)", seen)
				}
				t.Logf("wildcard watch event %s %s/%s cluster=%s", ev.Type, ev.Object.Namespace, ev.Object.Name, ev.Object.Annotations[framework.ClusterAnnotation])
				if (ev.Type == "ADDED" || ev.Type == "MODIFIED") && ev.Object.Name == "watched" {
					seen[ev.Object.Annotations[framework.ClusterAnnotation]] = true
				}
			case <-ctx.Done():
				t.Fatalf("no wildcard watch event from each cluster within the timeout (seen %v, want %s and %s)", seen, clusterA, clusterB)
			}
		}
	})

	t.Run("wildcard restrictions", func(t *testing.T) {
		alice := s.UserToken(t, "alice")
		framework.RequireStatus(t, s.Request(t, alice, "GET", "/clusters/*/api/v1/configmaps", nil), "wildcard list by a non-master user", 403, "Forbidden")
		framework.RequireStatus(t, s.Request(t, alice, "GET", "/clusters/*/api/v1/configmaps?watch=true&timeoutSeconds=5", nil), "wildcard watch by a non-master user", 403, "Forbidden")
		out, stderr, err := s.KubectlAsUser(t, "alice", "*").RunErr(t, "get", "configmaps", "-A")
		framework.RequireFails(t, out, stderr, err, "kubectl get on the wildcard as a non-master user", "forbidden")

		cm := framework.ConfigMapJSON(t, "via-wildcard", map[string]string{"a": "b"})
		framework.RequireStatus(t, s.AdminRequest(t, "POST", "/clusters/*/api/v1/namespaces/"+ns+"/configmaps", cm), "create through the wildcard", 400, "")
		framework.RequireStatus(t, s.AdminRequest(t, "GET", "/clusters/*/api/v1/namespaces/"+ns+"/configmaps/same", nil), "get one object through the wildcard", 400, "")
		framework.RequireStatus(t, s.AdminRequest(t, "DELETE", "/clusters/*/api/v1/namespaces/"+ns+"/configmaps/same", nil), "delete through the wildcard", 400, "")
		framework.RequireStatus(t, s.AdminRequest(t, "GET", "/clusters/*/api/v1/namespaces/"+ns+"/configmaps", nil), "namespaced list through the wildcard", 400, "")

		// Nothing above changed the clusters.
		framework.RequireData(t, kb.GetConfigMap(t, ns, "same"), map[string]string{"who": clusterB}, "configmap same in b after the wildcard attempts")
		out, stderr, err = ka.RunErr(t, "get", "configmap", "via-wildcard", "-n", ns)
		framework.RequireFails(t, out, stderr, err, "configmap created through the wildcard", "not found")
	})
}

// requireBothClusters checks a ConfigMapList (JSON) holds configmap "same"
// from each cluster with the right data and cluster annotation.
func requireBothClusters(t *testing.T, out, clusterA, clusterB, what string) {
	t.Helper()
	var list corev1.ConfigMapList
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("%s: decoding the list: %v\n%s", what, err, out)
	}
	got := map[string]string{}
	for _, cm := range list.Items {
		c := cm.Annotations[framework.ClusterAnnotation]
		if c == "" {
			t.Fatalf("%s: item %s/%s has no %s annotation", what, cm.Namespace, cm.Name, framework.ClusterAnnotation)
		}
		if cm.Name != "same" {
			t.Fatalf("%s: unexpected item %s/%s from %s (the label selector should only match configmap same)", what, cm.Namespace, cm.Name, c)
		}
		got[c] = cm.Data["who"]
	}
	if len(list.Items) != 2 || got[clusterA] != clusterA || got[clusterB] != clusterB {
		t.Fatalf("%s: expected configmap same from %s and %s, each with its own data; got %d items: %v", what, clusterA, clusterB, len(list.Items), got)
	}
}
