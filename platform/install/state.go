package install

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// state is one workload's readiness as the progress lines show it.
type state struct {
	// Ready: every replica updated and ready (Deployment, StatefulSet) or
	// the Job completed.
	Ready bool
	// Failed: a Job that gave up.
	Failed bool
	// Text is "1/2" for replicas, "running"/"complete"/"failed: <reason>" for Jobs.
	Text string
}

func replicas(p *int32) int32 {
	if p == nil {
		return 1
	}
	return *p
}

// deploymentState: ready once the controller saw the current spec and every
// replica is updated and available, with no old replicas left.
func deploymentState(d *appsv1.Deployment) state {
	want := replicas(d.Spec.Replicas)
	st := d.Status
	current := st.ObservedGeneration >= d.Generation
	ready := current && st.UpdatedReplicas == want && st.AvailableReplicas == want && st.Replicas == want
	text := fmt.Sprintf("%d/%d", st.ReadyReplicas, want)
	if current && st.UpdatedReplicas < want && st.Replicas > st.UpdatedReplicas {
		text += fmt.Sprintf(", %d updated", st.UpdatedReplicas)
	}
	return state{Ready: ready, Text: text}
}

// statefulSetState: ready once every replica runs the current revision and
// is ready.
func statefulSetState(s *appsv1.StatefulSet) state {
	want := replicas(s.Spec.Replicas)
	st := s.Status
	current := st.ObservedGeneration >= s.Generation
	updated := st.UpdatedReplicas == want
	if s.Spec.UpdateStrategy.Type == appsv1.OnDeleteStatefulSetStrategyType {
		updated = true // pods change when deleted, not now
	}
	ready := current && updated && st.ReadyReplicas == want && st.Replicas == want
	text := fmt.Sprintf("%d/%d", st.ReadyReplicas, want)
	if current && !updated && st.Replicas > 0 {
		text += fmt.Sprintf(", %d updated", st.UpdatedReplicas)
	}
	return state{Ready: ready, Text: text}
}

// jobState: complete or failed by the Job's conditions, else running.
func jobState(j *batchv1.Job) state {
	for _, c := range j.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case batchv1.JobComplete:
			return state{Ready: true, Text: "complete"}
		case batchv1.JobFailed:
			reason := c.Reason
			if c.Message != "" {
				reason += ": " + c.Message
			}
			return state{Failed: true, Text: "failed: " + reason}
		}
	}
	if j.Status.Active > 0 {
		return state{Text: "running"}
	}
	return state{Text: "pending"}
}
