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

func shard(name string, labels, annotations map[string]string) corev1alpha1.Shard {
	return corev1alpha1.Shard{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, Annotations: annotations}}
}

func TestPick(t *testing.T) {
	all := []corev1alpha1.Shard{
		shard("root", map[string]string{"region": "eu"}, nil),
		shard("b", map[string]string{"region": "us"}, nil),
		shard("c", map[string]string{"region": "us"}, map[string]string{UnschedulableAnnotation: "true"}),
	}
	s := &Shards{Self: "root", List: func(context.Context) ([]corev1alpha1.Shard, error) { return all, nil }}
	ws := func(uid string, selector map[string]string) *tenancyv1alpha1.Workspace {
		w := &tenancyv1alpha1.Workspace{ObjectMeta: metav1.ObjectMeta{UID: types.UID(uid)}}
		if selector != nil {
			w.Spec.Location = &tenancyv1alpha1.WorkspaceLocation{Selector: &metav1.LabelSelector{MatchLabels: selector}}
		}
		return w
	}
	for _, tc := range []struct {
		name     string
		ws       *tenancyv1alpha1.Workspace
		want     string
		wantNone bool
	}{
		{"selector us: b (c is unschedulable)", ws("1", map[string]string{"region": "us"}), "b", false},
		{"selector eu", ws("2", map[string]string{"region": "eu"}), "root", false},
		{"no match", ws("3", map[string]string{"region": "asia"}), "", true},
	} {
		got, err := s.Pick(context.Background(), tc.ws, "", nil)
		var none *NoShardError
		if tc.wantNone != errors.As(err, &none) || (!tc.wantNone && err != nil) || got.Name != tc.want {
			t.Errorf("%s: Pick = %q, %v; want %q", tc.name, got.Name, err, tc.want)
		}
	}
	// Without a selector: any schedulable shard, the same one for a UID.
	seen := map[string]bool{}
	for _, uid := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
		first, err := s.Pick(context.Background(), ws(uid, nil), "", nil)
		if err != nil {
			t.Fatal(err)
		}
		again, _ := s.Pick(context.Background(), ws(uid, nil), "", nil)
		if first.Name == "c" || first.Name != again.Name {
			t.Errorf("uid %s: picked %q then %q", uid, first.Name, again.Name)
		}
		seen[first.Name] = true
	}
	if !seen["root"] || !seen["b"] {
		t.Errorf("eight workspaces without a selector all went to %v", seen)
	}
}

func TestOnWithoutShards(t *testing.T) {
	local := &Clients{}
	var s *Shards
	if got, err := s.On(WithShard(context.Background(), "b"), local); err != nil || got != local {
		t.Errorf("single shard: On = %v, %v; want the local clients", got, err)
	}
	s = &Shards{Self: "b"}
	if got, err := s.On(WithShard(context.Background(), "b"), local); err != nil || got != local {
		t.Errorf("own shard: On = %v, %v; want the local clients", got, err)
	}
}
