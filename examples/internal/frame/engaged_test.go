package frame

import (
	"context"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
)

func TestEngaged(t *testing.T) {
	e := NewEngaged(logr.Discard())
	ctxA, cancelA := context.WithCancel(context.Background())
	ctxB, cancelB := context.WithCancel(context.Background())
	defer cancelB()
	_ = e.Engage(ctxA, "b-cluster", nil)
	_ = e.Engage(ctxB, "a-cluster", nil)
	if got := e.List(); !slices.Equal(got, []string{"a-cluster", "b-cluster"}) {
		t.Fatalf("List = %v", got)
	}
	// Engaged again before the old engagement ended: stays listed until both end.
	ctxA2, cancelA2 := context.WithCancel(context.Background())
	_ = e.Engage(ctxA2, "b-cluster", nil)
	cancelA()
	time.Sleep(50 * time.Millisecond)
	if !slices.Contains(e.List(), "b-cluster") {
		t.Fatal("b-cluster dropped while its second engagement runs")
	}
	cancelA2()
	deadline := time.Now().Add(5 * time.Second)
	for slices.Contains(e.List(), "b-cluster") {
		if time.Now().After(deadline) {
			t.Fatal("b-cluster still listed after both engagements ended")
		}
		time.Sleep(10 * time.Millisecond)
	}
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, httptest.NewRequest("GET", "/engaged", nil))
	if body := strings.TrimSpace(rec.Body.String()); body != `["a-cluster"]` || rec.Header().Get("Content-Type") != "application/json" {
		t.Errorf("/engaged = %s (%s)", body, rec.Header().Get("Content-Type"))
	}
}

func TestValidate(t *testing.T) {
	o := &Options{Workspace: "root:p", EndpointSlice: "s", Workers: 1}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	o = &Options{Workspace: "", EndpointSlice: "", Workers: 0}
	err := o.Validate()
	for _, want := range []string{"--workspace", "--endpoint-slice", "--workers"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate of empty options lacks %s: %v", want, err)
		}
	}
}
