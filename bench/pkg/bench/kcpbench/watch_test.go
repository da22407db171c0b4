package kcpbench

import (
	"context"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
)

func TestWatchObjectsSeesListedAndNewObjects(t *testing.T) {
	gvr := schema.GroupVersionResource{Group: "tenancy.kcp.io", Version: "v1alpha1", Resource: "workspaces"}
	existing := Workspace("old", "universal")
	SetPhase(existing, "Ready")
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{gvr: "WorkspaceList"}, existing)
	ri := client.Resource(gvr)

	tr := NewTracker()
	var mu sync.Mutex
	deleted := map[string]bool{}
	h := func(u *unstructured.Unstructured, del bool, at time.Time) {
		if del {
			mu.Lock()
			deleted[u.GetName()] = true
			mu.Unlock()
			return
		}
		if Phase(u) == "Ready" {
			tr.MarkReady(u.GetName(), at)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ws := newWatchSet(ctx)
	defer ws.stopAll()
	run := func(ctx context.Context, synced func()) { WatchObjects(ctx, ri, h, synced) }
	if err := ws.ensure(ctx, "p", run); err != nil {
		t.Fatal(err)
	}
	if err := ws.ensure(ctx, "p", run); err != nil || ws.len() != 1 {
		t.Fatalf("second ensure: %v, %d watches", err, ws.len())
	}
	if !tr.IsReady("old") {
		t.Fatal("listed Ready workspace not seen")
	}

	tr.Expect("new", time.Now())
	u := Workspace("new", "universal")
	if _, err := ri.Create(ctx, u, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	SetPhase(u, "Ready")
	if _, err := ri.Update(ctx, u, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := tr.Wait(ctx, "new"); err != nil {
		t.Fatal(err)
	}
	if err := ri.Delete(ctx, "old", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	for {
		mu.Lock()
		d := deleted["old"]
		mu.Unlock()
		if d {
			break
		}
		if ctx.Err() != nil {
			t.Fatal("deletion not seen")
		}
		time.Sleep(5 * time.Millisecond)
	}
	ws.stop("p")
	if ws.len() != 0 {
		t.Fatal("stop")
	}
}
