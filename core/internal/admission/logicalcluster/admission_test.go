package logicalcluster

import (
	"testing"

	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
)

func TestValidateUpdate(t *testing.T) {
	lc := func(phase corev1alpha1.LogicalClusterPhaseType, spec []string, status ...string) *corev1alpha1.LogicalCluster {
		out := &corev1alpha1.LogicalCluster{}
		out.Status.Phase = phase
		for _, s := range spec {
			out.Spec.Initializers = append(out.Spec.Initializers, corev1alpha1.LogicalClusterInitializer(s))
		}
		for _, s := range status {
			out.Status.Initializers = append(out.Status.Initializers, corev1alpha1.LogicalClusterInitializer(s))
		}
		return out
	}
	const (
		sched = corev1alpha1.LogicalClusterPhaseScheduling
		init  = corev1alpha1.LogicalClusterPhaseInitializing
		ready = corev1alpha1.LogicalClusterPhaseReady
	)
	ab := []string{"a", "b"}
	for _, tc := range []struct {
		name     string
		old, new *corev1alpha1.LogicalCluster
		ok       bool
	}{
		{"an initializer removes itself", lc(init, ab, ab...), lc(init, ab, "b"), true},
		{"initialization ends with none left", lc(init, ab), lc(ready, ab), true},
		{"start initializing with the spec's initializers", lc(sched, ab), lc(init, ab, ab...), true},
		{"spec.initializers changed", lc(ready, ab), lc(ready, []string{"a"}), false},
		{"status.initializers grows", lc(init, ab, "a"), lc(init, ab, "a", "b"), false},
		{"status.initializers changed when ready", lc(ready, ab), lc(ready, ab, "a"), false},
		{"initialization ends with initializers left", lc(init, ab, "a"), lc(ready, ab, "a"), false},
		{"phase goes back", lc(ready, nil), lc(sched, nil), false},
		{"start initializing with other initializers", lc(sched, ab), lc(init, ab, "a"), false},
	} {
		if err := validateUpdate(tc.old, tc.new); (err == nil) != tc.ok {
			t.Errorf("%s: err %v, want ok %v", tc.name, err, tc.ok)
		}
	}
}
