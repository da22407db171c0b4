package install

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// InstanceLabel selects the release's workloads: every chart labels its
// objects app.kubernetes.io/instance=<release name>, hook Jobs included.
const InstanceLabel = "app.kubernetes.io/instance"

// workload is one Deployment, StatefulSet or Job of the release.
type workload struct {
	Kind, Name string
	Selector   labels.Selector
	State      state

	// printed is the last line's state (with its pods' reason); seen once printed.
	printed state
	seen    bool
}

// pod is what progress keeps of a pod of the release.
type pod struct {
	labels labels.Set
	reason string
}

// component is the name a progress line shows: the object's name without
// the "<release>-" prefix, Jobs marked as such.
func (w *workload) component(release string) string {
	name := strings.TrimPrefix(w.Name, release+"-")
	if name == "" {
		name = w.Name
	}
	if w.Kind == "Job" {
		name += " (job)"
	}
	return name
}

// progress prints a line each time a workload of the release changes
// readiness: "core 0/1", later "core 1/1 ready (12s)".
type progress struct {
	out     io.Writer
	release string
	start   time.Time
	now     func() time.Time

	mu        sync.Mutex
	workloads map[string]*workload // by kind/name
	pods      map[string]pod       // by name
}

func newProgress(out io.Writer, release string, start time.Time) *progress {
	return &progress{out: out, release: release, start: start, now: time.Now, workloads: map[string]*workload{}, pods: map[string]pod{}}
}

// observe records a workload's state and prints it when it changed.
func (p *progress) observe(w workload) {
	p.mu.Lock()
	defer p.mu.Unlock()
	key := w.Kind + "/" + w.Name
	if old, ok := p.workloads[key]; ok {
		w.printed, w.seen = old.printed, old.seen
	}
	p.workloads[key] = &w
	p.print(&w)
}

// observePod records why a pod of the release is not ready (nil: deleted)
// and prints its workloads when that changed their line.
func (p *progress) observePod(name string, po *pod) {
	p.mu.Lock()
	defer p.mu.Unlock()
	old, had := p.pods[name]
	if po == nil {
		delete(p.pods, name)
		po = &old
	} else {
		p.pods[name] = *po
	}
	for _, key := range slices.Sorted(maps.Keys(p.workloads)) {
		if w := p.workloads[key]; w.Selector.Matches(po.labels) || (had && w.Selector.Matches(old.labels)) {
			p.print(w)
		}
	}
}

// print writes w's line unless it is the one printed last. A workload not
// ready shows the first reason its pods give: "core 0/1 (ImagePullBackOff)".
func (p *progress) print(w *workload) {
	st := w.State
	if !st.Ready && !st.Failed {
		for _, name := range slices.Sorted(maps.Keys(p.pods)) {
			if po := p.pods[name]; po.reason != "" && w.Selector.Matches(po.labels) {
				st.Text += " (" + po.reason + ")"
				break
			}
		}
	}
	if w.seen && st == w.printed {
		return
	}
	w.printed, w.seen = st, true
	fmt.Fprintln(p.out, formatLine(w.component(p.release), st, p.now().Sub(p.start)))
}

// formatLine is one progress line; elapsed is shown once ready or failed.
func formatLine(component string, st state, elapsed time.Duration) string {
	switch {
	case st.Ready && strings.Contains(st.Text, "/"):
		return fmt.Sprintf("%s %s ready (%s)", component, st.Text, elapsed.Round(time.Second))
	case st.Ready || st.Failed:
		return fmt.Sprintf("%s %s (%s)", component, st.Text, elapsed.Round(time.Second))
	}
	return fmt.Sprintf("%s %s", component, st.Text)
}

// notReady lists the workloads not ready (failed Jobs included), by name.
func (p *progress) notReady() []workload {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []workload
	for _, w := range p.workloads {
		if !w.State.Ready {
			out = append(out, *w)
		}
	}
	slices.SortFunc(out, func(a, b workload) int { return strings.Compare(a.Kind+a.Name, b.Kind+b.Name) })
	return out
}

// count is how many workloads were seen.
func (p *progress) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.workloads)
}

// watch feeds p from informers on the release's Deployments, StatefulSets
// and Jobs. It returns once the caches are synced, with the function that
// stops the informers (no line is printed after it returned).
func (p *progress) watch(ctx context.Context, client kubernetes.Interface, namespace string) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	f := informers.NewSharedInformerFactoryWithOptions(client, 0,
		informers.WithNamespace(namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.LabelSelector = labels.SelectorFromSet(labels.Set{InstanceLabel: p.release}).String()
		}))
	handle := func(toWorkload func(any) (workload, bool)) cache.ResourceEventHandler {
		on := func(obj any) {
			if w, ok := toWorkload(obj); ok {
				p.observe(w)
			}
		}
		return cache.ResourceEventHandlerFuncs{AddFunc: on, UpdateFunc: func(_, obj any) { on(obj) }}
	}
	_, _ = f.Apps().V1().Deployments().Informer().AddEventHandler(handle(func(obj any) (workload, bool) {
		d, ok := obj.(*appsv1.Deployment)
		if !ok {
			return workload{}, false
		}
		return workload{Kind: "Deployment", Name: d.Name, Selector: selector(d.Spec.Selector), State: deploymentState(d)}, true
	}))
	_, _ = f.Apps().V1().StatefulSets().Informer().AddEventHandler(handle(func(obj any) (workload, bool) {
		s, ok := obj.(*appsv1.StatefulSet)
		if !ok {
			return workload{}, false
		}
		return workload{Kind: "StatefulSet", Name: s.Name, Selector: selector(s.Spec.Selector), State: statefulSetState(s)}, true
	}))
	_, _ = f.Batch().V1().Jobs().Informer().AddEventHandler(handle(func(obj any) (workload, bool) {
		j, ok := obj.(*batchv1.Job)
		if !ok {
			return workload{}, false
		}
		return workload{Kind: "Job", Name: j.Name, Selector: selector(j.Spec.Selector), State: jobState(j)}, true
	}))
	onPod := func(obj any) {
		if po, ok := obj.(*corev1.Pod); ok {
			p.observePod(po.Name, &pod{labels: po.Labels, reason: podReason(po)})
		}
	}
	_, _ = f.Core().V1().Pods().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    onPod,
		UpdateFunc: func(_, obj any) { onPod(obj) },
		DeleteFunc: func(obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			if po, ok := obj.(*corev1.Pod); ok {
				p.observePod(po.Name, nil)
			}
		},
	})
	f.Start(ctx.Done())
	f.WaitForCacheSync(ctx.Done())
	return func() {
		cancel()
		f.Shutdown()
	}
}

func selector(s *metav1.LabelSelector) labels.Selector {
	sel, err := metav1.LabelSelectorAsSelector(s)
	if err != nil || s == nil {
		return labels.Nothing()
	}
	return sel
}

// podReason is why a pod is not ready, in Kubernetes' words: its first
// unready container's waiting or termination reason (ContainerCreating,
// ImagePullBackOff, CrashLoopBackOff, Error), else Unschedulable and the
// like while it waits for a node; "" for a ready pod or none given.
func podReason(po *corev1.Pod) string {
	for _, c := range slices.Concat(po.Status.InitContainerStatuses, po.Status.ContainerStatuses) {
		switch {
		case c.Ready:
		case c.State.Waiting != nil && c.State.Waiting.Reason != "":
			return c.State.Waiting.Reason
		case c.State.Terminated != nil && c.State.Terminated.Reason != "":
			return c.State.Terminated.Reason
		}
	}
	for _, c := range po.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason != "" {
			return c.Reason
		}
	}
	return ""
}
