package logicalcluster

import (
	"testing"

	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

func TestValidateUpdateSystemFields(t *testing.T) {
	base := &corev1alpha1.LogicalCluster{
		ObjectMeta: metav1.ObjectMeta{Finalizers: []string{corev1alpha1.LogicalClusterFinalizerName, "other"}},
		Spec: corev1alpha1.LogicalClusterSpec{Owner: &corev1alpha1.LogicalClusterOwner{Resource: "workspaces", Cluster: "p", Name: "ws", UID: "u"},
			Terminators: []corev1alpha1.LogicalClusterTerminator{"t1", "t2"}},
		Status: corev1alpha1.LogicalClusterStatus{Phase: corev1alpha1.LogicalClusterPhaseReady, URL: "https://shard/clusters/root:p:ws",
			Terminators: []corev1alpha1.LogicalClusterTerminator{"t1", "t2"}},
	}
	deleting := base.DeepCopy()
	deleting.DeletionTimestamp = &metav1.Time{}
	for _, tc := range []struct {
		name   string
		old    *corev1alpha1.LogicalCluster
		change func(*corev1alpha1.LogicalCluster)
		ok     bool
	}{
		{"conditions only", base, func(lc *corev1alpha1.LogicalCluster) { lc.Status.Conditions = nil }, true},
		{"the system's finalizer removed while live", base, func(lc *corev1alpha1.LogicalCluster) { lc.Finalizers = nil }, false},
		{"the system's finalizer removed while deleted", deleting, func(lc *corev1alpha1.LogicalCluster) { lc.Finalizers = []string{"other"} }, false},
		{"another finalizer removed while deleted", deleting, func(lc *corev1alpha1.LogicalCluster) {
			lc.Finalizers = []string{corev1alpha1.LogicalClusterFinalizerName}
		}, true},
		{"spec.directlyDeletable set", base, func(lc *corev1alpha1.LogicalCluster) { lc.Spec.DirectlyDeletable = true }, false},
		{"spec.owner changed", base, func(lc *corev1alpha1.LogicalCluster) { lc.Spec.Owner.Cluster = "victim" }, false},
		{"spec.terminators changed", base, func(lc *corev1alpha1.LogicalCluster) { lc.Spec.Terminators = nil }, false},
		{"status.URL changed", base, func(lc *corev1alpha1.LogicalCluster) { lc.Status.URL = "http://127.0.0.1:1" }, false},
		{"status.terminators removed while live", base, func(lc *corev1alpha1.LogicalCluster) { lc.Status.Terminators = nil }, false},
		{"a terminator removes itself while deleted", deleting, func(lc *corev1alpha1.LogicalCluster) {
			lc.Status.Terminators = lc.Status.Terminators[1:]
		}, true},
		{"status.terminators grows while deleted", deleting, func(lc *corev1alpha1.LogicalCluster) {
			lc.Status.Terminators = append(lc.Status.Terminators, "t3")
		}, false},
	} {
		now := tc.old.DeepCopy()
		tc.change(now)
		if err := validateUpdate(tc.old, now); (err == nil) != tc.ok {
			t.Errorf("%s: err %v, want ok %v", tc.name, err, tc.ok)
		}
	}
}
