package fidelity

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestShardNameLabel checks that the Shard is labelled name=<shard name> as
// kcp labels every shard, so that the location selectors kcp's clients and
// test fixtures use (`kubectl ws create --location-selector name=root`,
// spec.location.selector {name: root}) schedule the workspace instead of
// leaving it in Scheduling.
func TestShardNameLabel(t *testing.T) {
	t.Parallel()
	s := server(t)

	var shard struct {
		Metadata struct {
			Labels map[string]string `json:"labels"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal([]byte(s.KubectlFor("root").Run(t, "get", "shards", "root", "-o", "json")), &shard); err != nil {
		t.Fatal(err)
	}
	framework.RequireEqual(t, shard.Metadata.Labels["name"], "root", "label name of Shard root")

	org := s.CreateOrg(t, "shardlabel")
	ws := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "tenancy.kcp.io/v1alpha1",
		"kind":       "Workspace",
		"metadata":   map[string]any{"name": "located"},
		"spec": map[string]any{"location": map[string]any{
			"selector": map[string]any{"matchLabels": map[string]any{"name": "root"}},
		}},
	}}
	if _, err := s.Dynamic(t, org.Path).Resource(framework.WorkspaceGVR).Create(framework.CallContext(t), ws, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.WaitWorkspacePhase(t, s.RESTConfig(t, org.Path), "located", "Ready", time.Minute)

	k := s.WorkspaceKubectl(t, "root")
	k.WS(t, "use", org.Path)
	out := k.WS(t, "create", "by-plugin", "--location-selector", "name=root")
	framework.RequireContains(t, out, "is ready to use", "kubectl ws create --location-selector name=root")

	// A selector no shard matches still leaves the workspace unscheduled.
	ws.SetName("nowhere")
	ws.Object["spec"] = map[string]any{"location": map[string]any{
		"selector": map[string]any{"matchLabels": map[string]any{"name": "no-such-shard"}},
	}}
	if _, err := s.Dynamic(t, org.Path).Resource(framework.WorkspaceGVR).Create(framework.CallContext(t), ws, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, time.Minute, 250*time.Millisecond, "workspace nowhere to report that no shard matches", func() (bool, string) {
		got, err := s.Dynamic(t, org.Path).Resource(framework.WorkspaceGVR).Get(framework.CallContext(t), "nowhere", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		phase, _, _ := unstructured.NestedString(got.Object, "status", "phase")
		conditions, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
		text := framework.Compact(conditions)
		return phase == "Scheduling" && strings.Contains(text, "no-such-shard"), "phase " + phase + " conditions " + text
	})
}
