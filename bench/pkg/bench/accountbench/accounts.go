// Package accountbench measures the account-operator on a running platform
// (`make run`, or the launcher started by scripts/bench.sh): org Accounts
// created in root:orgs until every one is Ready, then accounts spread over
// those organizations until every one is Ready, and the operator's memory.
// Readiness is followed with one wildcard watch of Accounts through the
// core.platform-mesh.io virtual workspace, so waiting adds no load.
package accountbench

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/meshplane/meshplane/bench/pkg/bench"
	"github.com/meshplane/meshplane/bench/pkg/bench/kcpbench"
	"github.com/meshplane/meshplane/bench/pkg/bench/kubebench"
)

// Options size the benchmark.
type Options struct {
	// Orgs org Accounts are created in OrgsPath, then Accounts accounts,
	// round-robin over the organizations.
	Orgs, Accounts int
	// Workers is the number of concurrent creating clients.
	Workers int
	// OperatorPID and CorePID, when set, are sampled for RSS.
	OperatorPID, CorePID int
	OrgsPath             string
	// ProviderPath and Export locate the export's endpoint slice.
	ProviderPath, Export string
	PhaseTimeout, Settle time.Duration
	Logf                 func(format string, args ...any)
}

var (
	accountsGVR   = schema.GroupVersionResource{Group: "core.platform-mesh.io", Version: "v1alpha1", Resource: "accounts"}
	workspacesGVR = schema.GroupVersionResource{Group: "tenancy.kcp.io", Version: "v1alpha1", Resource: "workspaces"}
	slicesGVR     = schema.GroupVersionResource{Group: "apis.kcp.io", Version: "v1alpha1", Resource: "apiexportendpointslices"}
)

const clusterAnnotation = "kcp.io/cluster"

// Run creates the Accounts, waits for them, and records the figures in rep.
// The Accounts stay: the platform is thrown away after the benchmark.
func Run(ctx context.Context, t *kubebench.Target, o Options, rep *bench.Report) error {
	if o.Orgs < 1 || o.Workers < 1 {
		return errors.New("accounts benchmark: at least one org and one worker")
	}
	b := &runner{t: t, o: o, tracker: kcpbench.NewTracker(), prefix: "b" + bench.RandomSuffix(4) + "-"}
	vw, err := b.virtualWorkspace(ctx)
	if err != nil {
		return err
	}
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	synced := make(chan struct{})
	go b.watch(wctx, vw, synced)
	select {
	case <-synced:
	case <-ctx.Done():
		return ctx.Err()
	}
	b.sampleRSS(ctx, rep, "idle")

	orgsCluster, err := b.cluster(ctx, o.OrgsPath)
	if err != nil {
		return err
	}
	orgs := make([]target, o.Orgs)
	for i := range orgs {
		orgs[i] = target{path: o.OrgsPath, cluster: orgsCluster, name: fmt.Sprintf("%so%03d", b.prefix, i), typ: "org"}
	}
	if err := b.phase(ctx, rep, "org_accounts", fmt.Sprintf("org Accounts Ready (%d in %s)", o.Orgs, o.OrgsPath), orgs); err != nil {
		return err
	}
	b.sampleRSS(ctx, rep, fmt.Sprintf("%d orgs", o.Orgs))
	if o.Accounts == 0 {
		return nil
	}
	for i := range orgs {
		path := o.OrgsPath + ":" + orgs[i].name
		if orgs[i].cluster, err = b.cluster(ctx, path); err != nil {
			return err
		}
		orgs[i].path = path
	}
	accounts := make([]target, o.Accounts)
	for i := range accounts {
		org := orgs[i%len(orgs)]
		accounts[i] = target{path: org.path, cluster: org.cluster, name: fmt.Sprintf("%sa%04d", b.prefix, i), typ: "account"}
	}
	if err := b.phase(ctx, rep, "accounts", fmt.Sprintf("accounts Ready (%d over %d orgs)", o.Accounts, o.Orgs), accounts); err != nil {
		return err
	}
	b.sampleRSS(ctx, rep, fmt.Sprintf("%d orgs + %d accounts", o.Orgs, o.Accounts))
	return nil
}

type runner struct {
	t       *kubebench.Target
	o       Options
	tracker *kcpbench.Tracker
	prefix  string
}

// target is one Account to create: in the workspace path (logical cluster
// cluster), named name, of type typ.
type target struct{ path, cluster, name, typ string }

func (t target) key() string { return t.cluster + "/" + t.name }

func (b *runner) client(host string) (*dynamic.DynamicClient, error) {
	cfg := rest.CopyConfig(b.t.Config)
	cfg.Host = host
	return dynamic.NewForConfigAndClient(cfg, b.t.HTTP)
}

// cluster returns the logical cluster of a workspace path (its Workspace's
// spec.cluster in the parent).
func (b *runner) cluster(ctx context.Context, path string) (string, error) {
	parent, name := splitPath(path)
	c, err := b.client(bench.ClusterURL(b.t.Base, parent))
	if err != nil {
		return "", err
	}
	ws, err := c.Resource(workspacesGVR).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("workspace %s: %w", path, err)
	}
	cluster, _, _ := unstructured.NestedString(ws.Object, "spec", "cluster")
	if cluster == "" {
		return "", fmt.Errorf("workspace %s has no cluster yet", path)
	}
	return cluster, nil
}

func splitPath(path string) (string, string) {
	for i := len(path) - 1; i >= 0; i-- {
		if path[i] == ':' {
			return path[:i], path[i+1:]
		}
	}
	return "", path
}

// virtualWorkspace returns the export's virtual workspace URL from its
// endpoint slice.
func (b *runner) virtualWorkspace(ctx context.Context) (string, error) {
	c, err := b.client(bench.ClusterURL(b.t.Base, b.o.ProviderPath))
	if err != nil {
		return "", err
	}
	s, err := c.Resource(slicesGVR).Get(ctx, b.o.Export, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("endpoint slice %s in %s: %w", b.o.Export, b.o.ProviderPath, err)
	}
	eps, _, _ := unstructured.NestedSlice(s.Object, "status", "endpoints")
	for _, e := range eps {
		if m, ok := e.(map[string]any); ok {
			if u, _ := m["url"].(string); u != "" {
				return u, nil
			}
		}
	}
	return "", fmt.Errorf("endpoint slice %s in %s has no URL", b.o.Export, b.o.ProviderPath)
}

// watch follows every Account through the virtual workspace and marks
// those whose Ready condition is True; it re-lists after a broken watch.
func (b *runner) watch(ctx context.Context, vw string, synced chan<- struct{}) {
	c, err := b.client(vw + "/clusters/*")
	if err != nil {
		b.o.Logf("accounts watch: %v", err)
		return
	}
	once := sync.Once{}
	for ctx.Err() == nil {
		list, err := c.Resource(accountsGVR).List(ctx, metav1.ListOptions{})
		if err != nil {
			b.o.Logf("accounts list through %s: %v (retrying)", vw, err)
			time.Sleep(time.Second)
			continue
		}
		for i := range list.Items {
			b.observe(&list.Items[i])
		}
		once.Do(func() { close(synced) })
		w, err := c.Resource(accountsGVR).Watch(ctx, metav1.ListOptions{ResourceVersion: list.GetResourceVersion(), AllowWatchBookmarks: true})
		if err != nil {
			continue
		}
		for ev := range w.ResultChan() {
			if ev.Type == watch.Added || ev.Type == watch.Modified {
				if u, ok := ev.Object.(*unstructured.Unstructured); ok {
					b.observe(u)
				}
			}
		}
		w.Stop()
	}
}

func (b *runner) observe(u *unstructured.Unstructured) {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	var cs []metav1.Condition
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if !ok {
			continue
		}
		t, _ := m["type"].(string)
		s, _ := m["status"].(string)
		cs = append(cs, metav1.Condition{Type: t, Status: metav1.ConditionStatus(s)})
	}
	if meta.IsStatusConditionTrue(cs, "Ready") {
		b.tracker.MarkReady(u.GetAnnotations()[clusterAnnotation]+"/"+u.GetName(), time.Now())
	}
}

// phase creates targets with the workers and waits until all are Ready.
func (b *runner) phase(ctx context.Context, rep *bench.Report, key, what string, targets []target) error {
	ctx, cancel := context.WithTimeout(ctx, b.o.PhaseTimeout)
	defer cancel()
	b.o.Logf("%s: creating %d Accounts with %d clients", key, len(targets), b.o.Workers)
	work := make(chan target)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var createLat []time.Duration
	failed := 0
	for range b.o.Workers {
		wg.Go(func() {
			for t := range work {
				c, err := b.client(bench.ClusterURL(b.t.Base, t.path))
				start := time.Now()
				b.tracker.Expect(t.key(), start)
				if err == nil {
					_, err = c.Resource(accountsGVR).Create(ctx, account(t), metav1.CreateOptions{})
				}
				mu.Lock()
				if err != nil {
					failed++
					b.tracker.Fail(t.key())
					if failed <= 3 {
						b.o.Logf("%s: creating %s in %s: %v", key, t.name, t.path, err)
					}
				} else {
					createLat = append(createLat, time.Since(start))
				}
				mu.Unlock()
			}
		})
	}
	for _, t := range targets {
		select {
		case work <- t:
		case <-ctx.Done():
		}
	}
	close(work)
	wg.Wait()
	keys := make([]string, len(targets))
	for i, t := range targets {
		keys[i] = t.key()
	}
	_, werr := b.tracker.WaitAll(ctx, keys)
	span := b.tracker.Span(keys)
	rep.Add(key+"_ready_per_s", what+"/s", span.Rate(), bench.UnitPerSecond)
	rep.Add(key+"_elapsed_s", what+": first create to last Ready", span.Elapsed().Seconds(), bench.UnitSeconds)
	rep.AddLatency(key+"_create", what+": create request", "", bench.Summarize(createLat))
	rep.AddLatency(key+"_to_ready", what+": create to Ready", "", bench.Summarize(span.Latencies))
	b.o.Logf("%s: %d of %d Ready in %.1fs (%.1f/s)", key, span.Ready, len(targets), span.Elapsed().Seconds(), span.Rate())
	if failed > 0 {
		rep.Add(key+"_errors", what+": failed creates", float64(failed), bench.UnitCount)
	}
	if werr != nil {
		return fmt.Errorf("%s: %w", key, werr)
	}
	return nil
}

func account(t target) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "core.platform-mesh.io/v1alpha1",
		"kind":       "Account",
		"metadata":   map[string]any{"name": t.name},
		"spec":       map[string]any{"type": t.typ, "displayName": t.name},
	}}
}

func (b *runner) sampleRSS(ctx context.Context, rep *bench.Report, when string) {
	for _, p := range []struct {
		pid       int
		key, name string
	}{{b.o.OperatorPID, "account_operator", "account-operator"}, {b.o.CorePID, "core", "core"}} {
		if p.pid <= 0 {
			continue
		}
		if _, err := bench.SampleRSS(ctx, rep, p.pid, b.o.Settle, fmt.Sprintf("%s_rss_%s", p.key, keyOf(when)),
			fmt.Sprintf("%s RSS (%s)", p.name, when)); err != nil {
			rep.Error(fmt.Errorf("%s RSS: %w", p.name, err))
		}
	}
}

// keyOf turns a label into a metric key part.
func keyOf(s string) string {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
			out = append(out, c)
		default:
			if len(out) > 0 && out[len(out)-1] != '_' {
				out = append(out, '_')
			}
		}
	}
	return string(out)
}
