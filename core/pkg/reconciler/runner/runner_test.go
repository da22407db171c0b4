package runner

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/meshplane/meshplane/core/pkg/clusters"
)

func TestKey(t *testing.T) {
	for _, tt := range []struct {
		obj  any
		want Key
		str  string
	}{
		{&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns", Annotations: map[string]string{clusters.Annotation: "c1"}}},
			Key{Cluster: "c1", Name: "ns"}, "c1|ns"},
		{&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: "default", Annotations: map[string]string{clusters.Annotation: "c2"}}},
			Key{Cluster: "c2", Namespace: "default", Name: "cm"}, "c2|default/cm"},
		{cache.DeletedFinalStateUnknown{Key: "x", Obj: &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "gone",
			Annotations: map[string]string{clusters.Annotation: "c3"}}}}, Key{Cluster: "c3", Name: "gone"}, "c3|gone"},
	} {
		got, ok := KeyOf(tt.obj)
		if !ok || got != tt.want {
			t.Errorf("KeyOf(%T) = %+v, %v; want %+v", tt.obj, got, ok, tt.want)
		}
		if got.String() != tt.str {
			t.Errorf("%+v.String() = %q, want %q", got, got.String(), tt.str)
		}
	}
	if _, ok := KeyOf("no object"); ok {
		t.Error("KeyOf(string) is ok, want not ok")
	}
}

func TestHandlerUnwrapsTombstones(t *testing.T) {
	var got []Key
	h := Handler(ObjectKeys, func(k Key) { got = append(got, k) })
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns", Annotations: map[string]string{clusters.Annotation: "c1"}}}
	h.OnAdd(ns, false)
	h.OnUpdate(ns, ns)
	h.OnDelete(cache.DeletedFinalStateUnknown{Obj: ns})
	want := Key{Cluster: "c1", Name: "ns"}
	if len(got) != 3 || got[0] != want || got[1] != want || got[2] != want {
		t.Errorf("enqueued %v, want %v three times (add, update, tombstone)", got, want)
	}
}

func TestRunnerRetriesAndRequeues(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	calls := map[Key]int{}
	done := make(chan struct{})
	r := New("test", 1, func(ctx context.Context, key Key) (time.Duration, error) {
		mu.Lock()
		defer mu.Unlock()
		calls[key]++
		switch {
		case key.Name == "fails" && calls[key] == 1:
			return 0, errors.New("first try fails")
		case key.Name == "requeues" && calls[key] == 1:
			return time.Millisecond, nil
		}
		if calls[Key{Name: "fails"}] == 2 && calls[Key{Name: "requeues"}] == 2 {
			close(done)
		}
		return 0, nil
	})
	r.Add(Key{Name: "fails"})
	r.Add(Key{Name: "requeues"})
	go r.Run(ctx)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("calls = %v, want each key reconciled twice", calls)
	}
}
