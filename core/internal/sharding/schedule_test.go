package sharding

import (
	"context"
	"errors"
	"testing"

	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TestPickByCapacity: without a selector a workspace goes to the shard
// with the fewest logical clusters per unit of weight, counting the picks
// made meanwhile; a retried Workspace keeps its shard; a type's selector
// narrows the choice as the Workspace's does.
func TestPickByCapacity(t *testing.T) {
	all := []corev1alpha1.Shard{
		shard("root", map[string]string{"tier": "small"}, nil),
		shard("b", map[string]string{"tier": "large"}, map[string]string{WeightAnnotation: "3"}),
		shard("c", map[string]string{"tier": "large"}, map[string]string{WeightAnnotation: "not a number"}),
	}
	local := 10
	s := &Shards{Self: "root", List: func(context.Context) ([]corev1alpha1.Shard, error) { return all, nil }, LocalCount: func() int { return local }}
	ws := func(uid string) *tenancyv1alpha1.Workspace {
		return &tenancyv1alpha1.Workspace{ObjectMeta: metav1.ObjectMeta{UID: types.UID(uid)}}
	}
	// root holds 10, b and c nothing (no replicas here): loads 10, 0, 0.
	// b's weight 3 takes three picks for each of c's (c's weight is 1).
	got := map[string]int{}
	for i := range 40 {
		sh, err := s.Pick(context.Background(), ws(string(rune('A'+i))), "", nil)
		if err != nil {
			t.Fatal(err)
		}
		got[sh.Name]++
	}
	// After 40 picks: b ~ 3*(c), root (10 already) gets its share only once
	// c passes 10.
	if got["b"] < 3*got["c"]-3 || got["b"] > 3*got["c"]+3 || got["root"] > got["c"]-9+1 {
		t.Errorf("40 picks by capacity: %v; want b about 3 times c, root only once c passed its 10", got)
	}
	first, _ := s.Pick(context.Background(), ws("A"), "", nil)
	for range 5 {
		if again, _ := s.Pick(context.Background(), ws("A"), "", nil); again.Name != first.Name {
			t.Errorf("a retried Workspace moved from %s to %s", first.Name, again.Name)
		}
	}
	// A cluster this shard holds stays here whatever the load.
	s.Holds = func(cluster string) bool { return cluster == "held" }
	if sh, _ := s.Pick(context.Background(), ws("new-1"), "held", nil); sh.Name != "root" {
		t.Errorf("a workspace whose cluster root holds went to %s", sh.Name)
	}
	// A type's selector narrows the candidates; an unmatched one refuses.
	small, err := TypeSelector([]*tenancyv1alpha1.WorkspaceType{{ObjectMeta: metav1.ObjectMeta{Name: "t",
		Annotations: map[string]string{TypeSelectorAnnotation: "tier=small"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if sh, _ := s.Pick(context.Background(), ws("new-2"), "", small); sh.Name != "root" {
		t.Errorf("a workspace of a type pinned to tier=small went to %s", sh.Name)
	}
	none, _ := TypeSelector([]*tenancyv1alpha1.WorkspaceType{
		{ObjectMeta: metav1.ObjectMeta{Name: "t", Annotations: map[string]string{TypeSelectorAnnotation: "tier=small"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "base", Annotations: map[string]string{TypeSelectorAnnotation: "tier=large"}}},
	})
	var noShard *NoShardError
	if _, err := s.Pick(context.Background(), ws("new-3"), "", none); !errors.As(err, &noShard) {
		t.Errorf("a type whose selectors no shard matches: %v, want NoShardError", err)
	}
	if _, err := TypeSelector([]*tenancyv1alpha1.WorkspaceType{{ObjectMeta: metav1.ObjectMeta{Name: "bad",
		Annotations: map[string]string{TypeSelectorAnnotation: "tier in (("}}}}); err == nil {
		t.Error("an unparsable type selector was accepted")
	}
	if w := Weight(all[1]); w != 3 {
		t.Errorf("weight of b = %v, want 3", w)
	}
	if w := Weight(all[2]); w != 1 {
		t.Errorf("weight of c (invalid annotation) = %v, want 1", w)
	}
}
