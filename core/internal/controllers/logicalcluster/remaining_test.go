package logicalcluster

import "testing"

func TestRemainingMessage(t *testing.T) {
	r := NewRemaining()
	if !r.Empty() || r.Message() != "" {
		t.Fatalf("empty Remaining: empty %v, message %q", r.Empty(), r.Message())
	}
	r.Objects["namespaces."] = 2
	r.Objects["widgets.example.com"] = 1
	r.Finalizers["example.com/hold"] = 1
	want := "Some resources are remaining: namespaces. has 2 resource instances, widgets.example.com has 1 resource instances; " +
		"Some content in the logical cluster has finalizers remaining: example.com/hold in 1 resource instances"
	if got := r.Message(); got != want {
		t.Errorf("message:\n got %q\nwant %q", got, want)
	}
}
