package serviceaccounts

import (
	"strings"
	"testing"
)

// TestEventsOneStore checks that events.k8s.io/v1 and core/v1 Events are
// one store, as on Kubernetes: written through one API, read, selected,
// patched and deleted through the other, with kube's field mapping; in
// one workspace only.
func TestEventsOneStore(t *testing.T) {
	s := server(t)
	org := s.CreateOrg(t, "sa-events")
	wss := s.CreateWorkspaces(t, org.Path, "a", "b")
	a, b := s.KubectlFor(wss[0].Path), s.KubectlFor(wss[1].Path)
	a.RunStdin(t, `apiVersion: events.k8s.io/v1
kind: Event
metadata: {name: synced, namespace: default}
eventTime: "2026-01-01T00:00:00.000000Z"
reportingController: example.com/ctl
reportingInstance: ctl-1
action: Sync
reason: Synced
note: written as events.k8s.io/v1
type: Normal
regarding: {kind: ConfigMap, namespace: default, name: cfg}
`, "create", "-f", "-")
	a.RunStdin(t, `apiVersion: v1
kind: Event
metadata: {name: failed, namespace: default}
reason: Failed
message: written as core/v1
type: Warning
count: 3
source: {component: kubelet}
involvedObject: {kind: ConfigMap, namespace: default, name: other}
`, "create", "-f", "-")

	core := a.Run(t, "get", "events", "-n", "default", "-o",
		`jsonpath={range .items[*]}{.metadata.name}:{.message}:{.involvedObject.name}:{.reportingComponent}{"\n"}{end}`)
	for _, want := range []string{"synced:written as events.k8s.io/v1:cfg:example.com/ctl", "failed:written as core/v1:other:"} {
		if !strings.Contains(core, want) {
			t.Errorf("core/v1 events = %q, want a line %q", core, want)
		}
	}
	v1 := a.Run(t, "get", "events.events.k8s.io", "-n", "default", "-o",
		`jsonpath={range .items[*]}{.metadata.name}:{.note}:{.regarding.name}:{.deprecatedCount}:{.deprecatedSource.component}{"\n"}{end}`)
	for _, want := range []string{"synced:written as events.k8s.io/v1:cfg::", "failed:written as core/v1:other:3:kubelet"} {
		if !strings.Contains(v1, want) {
			t.Errorf("events.k8s.io/v1 events = %q, want a line %q", v1, want)
		}
	}
	if got := strings.TrimSpace(a.Run(t, "get", "events.events.k8s.io", "-n", "default", "--field-selector", "regarding.name=other", "-o", "name")); got != "event.events.k8s.io/failed" {
		t.Errorf("events.k8s.io/v1 events selected by regarding.name=other: %q, want only failed", got)
	}

	a.Run(t, "patch", "events.events.k8s.io", "failed", "-n", "default", "--type=merge", "-p", `{"note":"patched as events.k8s.io/v1"}`)
	if got := a.Run(t, "get", "event", "failed", "-n", "default", "-o", "jsonpath={.message}"); got != "patched as events.k8s.io/v1" {
		t.Errorf("core/v1 message after patching the note = %q", got)
	}
	a.Run(t, "delete", "event", "synced", "-n", "default")
	if out, _, err := a.RunErr(t, "get", "events.events.k8s.io", "synced", "-n", "default"); err == nil {
		t.Errorf("synced still readable as events.k8s.io/v1 after deleting it as core/v1: %s", out)
	}
	if got := strings.TrimSpace(b.Run(t, "get", "events.events.k8s.io", "-n", "default", "-o", "name")); got != "" {
		t.Errorf("events of workspace a visible in b: %q", got)
	}
}
