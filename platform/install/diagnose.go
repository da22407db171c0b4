package install

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// diagnose explains why each workload is not ready: per pod its waiting
// reason, its last event and its last log line; with no pod, the last event
// of the workload (or of its ReplicaSets: a refused pod shows up there).
func diagnose(ctx context.Context, client kubernetes.Interface, namespace, release string, ws []workload) string {
	events, _ := client.CoreV1().Events(namespace).List(ctx, metav1.ListOptions{})
	var b strings.Builder
	for _, w := range ws {
		fmt.Fprintf(&b, "  %s %s: ", w.component(release), w.State.Text)
		pods, err := client.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: w.Selector.String()})
		if err != nil {
			fmt.Fprintf(&b, "listing its pods: %v\n", err)
			continue
		}
		if len(pods.Items) == 0 {
			fmt.Fprintf(&b, "no pods")
			if ev := lastEvent(events, func(o corev1.ObjectReference) bool {
				return o.Name == w.Name || (o.Kind == "ReplicaSet" && strings.HasPrefix(o.Name, w.Name+"-"))
			}); ev != "" {
				fmt.Fprintf(&b, "; last event: %s", ev)
			}
			b.WriteString("\n")
			continue
		}
		b.WriteString("\n")
		for _, pod := range pods.Items {
			fmt.Fprintf(&b, "    pod %s: %s", pod.Name, podCondition(&pod))
			if ev := lastEvent(events, func(o corev1.ObjectReference) bool { return o.Kind == "Pod" && o.Name == pod.Name }); ev != "" {
				fmt.Fprintf(&b, "; last event: %s", ev)
			}
			if line := lastLogLine(ctx, client, &pod); line != "" {
				fmt.Fprintf(&b, "; last log line: %s", line)
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

// podCondition is the pod's phase and its first unready container's state.
func podCondition(pod *corev1.Pod) string {
	s := string(pod.Status.Phase)
	for _, c := range slices.Concat(pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses) {
		if c.Ready {
			continue
		}
		switch {
		case c.State.Waiting != nil:
			s += fmt.Sprintf(", container %s waiting: %s %s", c.Name, c.State.Waiting.Reason, c.State.Waiting.Message)
		case c.State.Terminated != nil:
			s += fmt.Sprintf(", container %s terminated: %s (exit %d)", c.Name, c.State.Terminated.Reason, c.State.Terminated.ExitCode)
		default:
			s += fmt.Sprintf(", container %s not ready", c.Name)
		}
		if c.RestartCount > 0 {
			s += fmt.Sprintf(", %d restarts", c.RestartCount)
		}
		break
	}
	return strings.TrimSpace(s)
}

// lastEvent is the newest event about an object match accepts, as
// "Reason: message".
func lastEvent(events *corev1.EventList, match func(corev1.ObjectReference) bool) string {
	if events == nil {
		return ""
	}
	var last *corev1.Event
	for i := range events.Items {
		e := &events.Items[i]
		if !match(e.InvolvedObject) {
			continue
		}
		if last == nil || eventTime(e).Time.After(eventTime(last).Time) {
			last = e
		}
	}
	if last == nil {
		return ""
	}
	return fmt.Sprintf("%s: %s", last.Reason, strings.TrimSpace(last.Message))
}

func eventTime(e *corev1.Event) metav1.Time {
	switch {
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp
	case !e.EventTime.IsZero():
		return metav1.Time{Time: e.EventTime.Time}
	}
	return e.CreationTimestamp
}

// lastLogLine is the last line the pod's first unready container wrote
// (its previous run's when it restarted); "" when the log is unavailable.
func lastLogLine(ctx context.Context, client kubernetes.Interface, pod *corev1.Pod) string {
	for _, c := range slices.Concat(pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses) {
		if c.Ready {
			continue
		}
		tail := int64(5)
		opts := &corev1.PodLogOptions{Container: c.Name, TailLines: &tail, Previous: c.RestartCount > 0 && c.State.Running == nil}
		raw, err := client.CoreV1().Pods(pod.Namespace).GetLogs(pod.Name, opts).DoRaw(ctx)
		if err != nil {
			return ""
		}
		var last string
		sc := bufio.NewScanner(bytes.NewReader(raw))
		for sc.Scan() {
			if l := strings.TrimSpace(sc.Text()); l != "" {
				last = l
			}
		}
		return last
	}
	return ""
}
