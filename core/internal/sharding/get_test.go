package sharding

import (
	"context"
	"testing"

	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
)

// Get answers from the last list of the Shards (it is on the path of
// every check asked of another shard) and lists again for a name the
// list lacks (a shard added since).
func TestGetFromLastList(t *testing.T) {
	all := []corev1alpha1.Shard{shard("root", nil, nil), shard("b", nil, nil)}
	lists := 0
	s := &Shards{Self: "b", List: func(context.Context) ([]corev1alpha1.Shard, error) {
		lists++
		return all, nil
	}}
	for range 3 {
		if _, err := s.Get(context.Background(), "root"); err != nil {
			t.Fatal(err)
		}
	}
	if lists != 1 {
		t.Errorf("three Gets of a listed shard listed %d times, want 1", lists)
	}
	all = append(all, shard("c", nil, nil))
	if _, err := s.Get(context.Background(), "c"); err != nil {
		t.Fatalf("a shard added since the last list: %v", err)
	}
	if _, err := s.Get(context.Background(), "nope"); err == nil {
		t.Error("an unregistered shard was found")
	}
	if lists != 3 {
		t.Errorf("lists = %d, want 3 (one per name the last list lacked)", lists)
	}
}
