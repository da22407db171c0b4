package install

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
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
}

func newProgress(out io.Writer, release string, start time.Time) *progress {
	return &progress{out: out, release: release, start: start, now: time.Now, workloads: map[string]*workload{}}
}

// observe records a workload's state and prints it when it changed.
func (p *progress) observe(w workload) {
	p.mu.Lock()
	defer p.mu.Unlock()
	key := w.Kind + "/" + w.Name
	if old, ok := p.workloads[key]; ok && old.State == w.State {
		old.Selector = w.Selector
		return
	}
	p.workloads[key] = &w
	fmt.Fprintln(p.out, formatLine(w.component(p.release), w.State, p.now().Sub(p.start)))
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
