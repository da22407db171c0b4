package resources

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// configMap is the JSON of a ConfigMap with labels, annotations and data.
func configMap(t *testing.T, name string, labels, annotations, data map[string]string) []byte {
	t.Helper()
	body, err := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name, "labels": labels, "annotations": annotations}, "data": data})
	if err != nil {
		t.Fatal(err)
	}
	return body
}

// manyLabels returns n distinct valid labels.
func manyLabels(n int) map[string]string {
	m := make(map[string]string, n)
	for i := 0; i < n; i++ {
		m[fmt.Sprintf("label-%06d", i)] = fmt.Sprintf("value-%06d", i)
	}
	return m
}

// longLabels returns n distinct valid labels of 60-character keys and
// values.
func longLabels(n int) map[string]string {
	m := make(map[string]string, n)
	for i := 0; i < n; i++ {
		m[fmt.Sprintf("%s-%06d", strings.Repeat("k", 53), i)] = fmt.Sprintf("%s-%06d", strings.Repeat("v", 53), i)
	}
	return m
}

// TestObjectSizeLimits checks the limits on what a tenant may store: a
// body with an object of more than 10,000 entries, such as a ConfigMap
// with 100,000 labels (2.7 MB of JSON, under the 3 MiB body limit, which
// held a CPU for over 30 s in the field manager), answers 413 at once; an
// object larger than etcd's request limit (1.5 MiB as stored) answers 413
// whether created, replaced or patched; a body over 3 MiB answers 413;
// annotations over 256 KiB answer 422 (kube's validation). Objects within
// the limits are stored.
func TestObjectSizeLimits(t *testing.T) {
	s := server(t)
	cluster, k := s.NewCluster(t, "e2e-limits")
	k.Run(t, "create", "namespace", "team")
	token := s.AdminToken(t)
	cms := "/clusters/" + cluster + "/api/v1/namespaces/team/configmaps"

	labels := configMap(t, "labels", manyLabels(100_000), nil, nil)
	if len(labels) < 2_500_000 || len(labels) > 3<<20 {
		t.Fatalf("the 100,000-label ConfigMap is %d bytes of JSON; want 2.5 MB to 3 MiB", len(labels))
	}
	r := s.RequestWithType(t, token, "POST", cms, "application/json", labels)
	framework.RequireStatus(t, r, "creating a ConfigMap with 100,000 labels (2.7 MB)", 413, "RequestEntityTooLarge")
	framework.RequireContains(t, r.Status(t).Message, "more than 10000 entries", "the 413's message")
	framework.RequireStatus(t, s.RequestWithType(t, token, "POST", cms, "application/json", configMap(t, "labels", manyLabels(10_001), nil, nil)),
		"creating a ConfigMap with 10,001 labels", 413, "RequestEntityTooLarge")

	// 1 MiB of data (kube's limit for a ConfigMap's data) and 5,000 long
	// labels: 1.6 MiB.
	bigData := map[string]string{"blob": strings.Repeat("x", 1<<20-64)}
	r = s.RequestWithType(t, token, "POST", cms, "application/json", configMap(t, "data", longLabels(5000), nil, bigData))
	framework.RequireStatus(t, r, "creating a ConfigMap of 1.6 MiB", 413, "RequestEntityTooLarge")
	framework.RequireContains(t, r.Status(t).Message, "request is too large", "the 413's message")
	framework.RequireStatus(t, s.RequestWithType(t, token, "POST", cms, "application/json",
		configMap(t, "body", nil, nil, map[string]string{"blob": strings.Repeat("x", 3<<20)})),
		"creating a ConfigMap from a body over 3 MiB", 413, "RequestEntityTooLarge")
	framework.RequireStatus(t, s.RequestWithType(t, token, "POST", cms, "application/json",
		configMap(t, "annotations", nil, map[string]string{"a": strings.Repeat("x", 257*1024)}, nil)),
		"creating a ConfigMap with 257 KiB of annotations", 422, "Invalid")

	// Within the limits: 1 MiB of data, 1,000 long labels.
	framework.RequireCode(t, s.RequestWithType(t, token, "POST", cms, "application/json",
		configMap(t, "fits", longLabels(1000), nil, bigData)), "creating a 1.2 MB ConfigMap", 201)
	// Growing it past the limits by replace, merge patch or apply: 413, and
	// it is unchanged.
	framework.RequireStatus(t, s.RequestWithType(t, token, "PUT", cms+"/fits", "application/json", configMap(t, "fits", longLabels(5000), nil, bigData)),
		"replacing the ConfigMap with one of 1.6 MiB", 413, "RequestEntityTooLarge")
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": longLabels(5000)}})
	framework.RequireStatus(t, s.RequestWithType(t, token, "PATCH", cms+"/fits", "application/merge-patch+json", patch),
		"patching 5,000 long labels onto the ConfigMap", 413, "RequestEntityTooLarge")
	patch, _ = json.Marshal(map[string]any{"metadata": map[string]any{"labels": manyLabels(100_000)}})
	framework.RequireStatus(t, s.RequestWithType(t, token, "PATCH", cms+"/fits", "application/merge-patch+json", patch),
		"patching 100,000 labels onto the ConfigMap", 413, "RequestEntityTooLarge")
	framework.RequireStatus(t, s.RequestWithType(t, token, "PATCH", cms+"/fits?fieldManager=e2e&force=true", "application/apply-patch+yaml",
		configMap(t, "fits", longLabels(5000), nil, bigData)), "applying 5,000 long labels to the ConfigMap", 413, "RequestEntityTooLarge")
	got := k.GetConfigMap(t, "team", "fits")
	framework.RequireEqual(t, len(got.Labels), 1000, "labels of the ConfigMap after the refused writes")
	framework.RequireEqual(t, len(got.Data["blob"]), 1<<20-64, "data of the ConfigMap after the refused writes")
	for _, name := range []string{"labels", "data", "body", "annotations"} {
		if _, _, err := k.RunErr(t, "get", "configmap", name, "-n", "team"); err == nil {
			t.Errorf("configmap %s was stored though its create was refused", name)
		}
	}
}
