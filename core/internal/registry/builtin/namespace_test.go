package builtin

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestGCFinalizers(t *testing.T) {
	policy := func(p metav1.DeletionPropagation) *metav1.DeleteOptions {
		return &metav1.DeleteOptions{PropagationPolicy: &p}
	}
	yes, no := true, false
	for _, tc := range []struct {
		name    string
		in      []string
		options *metav1.DeleteOptions
		want    []string
	}{
		{name: "no policy", in: []string{"x"}, options: &metav1.DeleteOptions{}, want: []string{"x"}},
		{name: "orphan", in: []string{"x"}, options: policy(metav1.DeletePropagationOrphan), want: []string{"x", "orphan"}},
		{name: "foreground replaces orphan", in: []string{"orphan"}, options: policy(metav1.DeletePropagationForeground), want: []string{"foregroundDeletion"}},
		{name: "background clears both", in: []string{"orphan", "x", "foregroundDeletion"}, options: policy(metav1.DeletePropagationBackground), want: []string{"x"}},
		{name: "legacy orphanDependents", options: &metav1.DeleteOptions{OrphanDependents: &yes}, want: []string{"orphan"}},
		{name: "legacy orphanDependents false", in: []string{"orphan"}, options: &metav1.DeleteOptions{OrphanDependents: &no}, want: []string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := gcFinalizers(tc.in, tc.options)
			if !slices.Equal(got, tc.want) && !(len(got) == 0 && len(tc.want) == 0) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}
