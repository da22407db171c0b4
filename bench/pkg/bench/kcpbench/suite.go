// Package kcpbench measures kcp's multi-tenancy APIs on a kcp-compatible
// server (Meshplane or kcp) with client-go's dynamic client: how fast
// workspaces become Ready (flat and as a tree), what a workspace costs in
// server memory, how long deleting a workspace tree takes, and API sharing
// (APIBindings becoming Bound, wildcard LIST and watch event latency through
// the APIExport virtual workspace).
//
// Readiness is observed with watches on the parent workspace (Workspaces)
// or the consumer workspace (APIBindings), never by polling each object.
package kcpbench

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/meshplane/meshplane/bench/pkg/bench"
	"github.com/meshplane/meshplane/bench/pkg/bench/kubebench"
)

// Options configure a Suite. Zero counts skip the corresponding phase.
type Options struct {
	// Workspaces is the size of each flat run (one with 1 client, one
	// with Workers clients).
	Workspaces int
	// TreeSize workspaces are created as a tree with TreeFanout children
	// per workspace, then the tree is deleted.
	TreeSize   int
	TreeFanout int
	// Workers is the concurrency of the multi-client workspace runs and
	// of the binding creates.
	Workers int
	// Large flat workspaces are created with Workers clients after the
	// other workspace phases, followed by an RSS sample.
	Large int

	// Bindings consumer workspaces each get an APIBinding, timed.
	Bindings int
	// Lists wildcard LISTs through the virtual workspace over ListObjects
	// widgets in ListConsumers consumers.
	ListConsumers, ListObjects, Lists int
	// The same with a large object count; LargeObjects 0 skips.
	LargeConsumers, LargeObjects, LargeLists int
	// WatchEvents widgets are created at WatchRate per second over
	// WatchConsumers consumers while a wildcard watch measures the event
	// latency.
	WatchConsumers, WatchEvents int
	WatchRate                   float64
	// ObjectWorkers is the concurrency of widget creation.
	ObjectWorkers int

	PID    int           // server process to sample VmRSS from; 0: none
	Settle time.Duration // pause before an RSS sample taken after load

	PhaseTimeout time.Duration
	Logf         func(format string, args ...any)
}

// WorkspacesEnabled reports whether any workspace phase runs.
func (o Options) WorkspacesEnabled() bool {
	return o.Workspaces > 0 || o.TreeSize > 0 || o.Large > 0
}

// SharingEnabled reports whether any API sharing phase runs.
func (o Options) SharingEnabled() bool {
	return o.Bindings > 0 || o.Lists > 0 || (o.LargeObjects > 0 && o.LargeLists > 0) || o.WatchEvents > 0
}

// Suite runs the workspace and API sharing phases against one Target.
type Suite struct {
	t         *kubebench.Target
	o         Options
	watchHTTP *http.Client // no overall timeout, for watches
	tracker   *Tracker
	watches   *watchSet

	mu      sync.Mutex
	clients map[string]*dynamic.DynamicClient
	orgs    []string // organizations created in root, deleted by Cleanup
	liveWS  int      // Ready workspaces created and not deleted (orgs excluded)
}

// NewSuite validates options and prepares the clients.
func NewSuite(t *kubebench.Target, o Options) (*Suite, error) {
	if o.Workers < 1 {
		o.Workers = 1
	}
	if o.ObjectWorkers < 1 {
		o.ObjectWorkers = 1
	}
	if o.TreeFanout < 1 {
		o.TreeFanout = 10
	}
	if o.WatchRate <= 0 {
		o.WatchRate = 50
	}
	if o.PhaseTimeout <= 0 {
		o.PhaseTimeout = 15 * time.Minute
	}
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	for _, c := range []struct {
		name             string
		consumers, items int
	}{{"list", o.ListConsumers, o.ListObjects}, {"large list", o.LargeConsumers, o.LargeObjects}} {
		if c.items > 0 && c.consumers < 1 {
			return nil, fmt.Errorf("%s: %d objects need at least one consumer", c.name, c.items)
		}
	}
	if o.WatchEvents > 0 && o.WatchConsumers < 1 {
		return nil, errors.New("watch: events need at least one consumer")
	}
	cfg := rest.CopyConfig(t.Config)
	cfg.Timeout = 0
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("watch http client: %w", err)
	}
	return &Suite{t: t, o: o, watchHTTP: hc, tracker: NewTracker(), clients: map[string]*dynamic.DynamicClient{}}, nil
}

// client returns a dynamic client for the workspace path (or logical
// cluster) path, sharing the target's HTTP client.
func (s *Suite) client(path string) (*dynamic.DynamicClient, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.clients[path]; c != nil {
		return c, nil
	}
	cfg := rest.CopyConfig(s.t.Config)
	cfg.Host = bench.ClusterURL(s.t.Base, path)
	c, err := dynamic.NewForConfigAndClient(cfg, s.t.HTTP)
	if err != nil {
		return nil, err
	}
	s.clients[path] = c
	return c, nil
}

// watchClient returns a dynamic client for watches below host (a full URL).
func (s *Suite) watchClient(host string) (*dynamic.DynamicClient, error) {
	cfg := rest.CopyConfig(s.t.Config)
	cfg.Host = host
	cfg.Timeout = 0
	return dynamic.NewForConfigAndClient(cfg, s.watchHTTP)
}

// Run executes all enabled phases, recording metrics and errors in rep; it
// returns an error if any phase failed.
func (s *Suite) Run(ctx context.Context, rep *bench.Report) error {
	s.watches = newWatchSet(ctx)
	defer s.watches.stopAll()
	var failed []error
	fail := func(phase string, err error) {
		if err != nil {
			err = fmt.Errorf("%s: %w", phase, err)
			rep.Error(err)
			failed = append(failed, err)
			s.o.Logf("ERROR %v", err)
		}
	}
	if s.o.WorkspacesEnabled() && ctx.Err() == nil {
		fail("workspaces", s.runWorkspaces(ctx, rep, fail))
	}
	if s.o.SharingEnabled() && ctx.Err() == nil {
		fail("API sharing", s.runSharing(ctx, rep, fail))
	}
	return errors.Join(failed...)
}

// rss samples the server's RSS (after Settle when settle is set) and, with
// key set, records it.
func (s *Suite) rss(ctx context.Context, rep *bench.Report, key, figure string, settle bool) (int64, error) {
	var wait time.Duration
	if settle {
		wait = s.o.Settle
	}
	return bench.SampleRSS(ctx, rep, s.o.PID, wait, key, figure)
}

// liveHeap forces a garbage collection in the server and returns its live
// Go heap; ok is false (the failure logged) where the server does not
// serve its heap profile to this user.
func (s *Suite) liveHeap(ctx context.Context) (v int64, ok bool) {
	v, err := bench.ReadLiveHeap(ctx, s.t.HTTP, s.t.Base)
	if err != nil {
		s.o.Logf("no live heap figure: %v", err)
		return 0, false
	}
	return v, true
}

// ensureWorkspaceWatch makes sure the workspaces of parent are watched,
// marking "<parent>:<name>" ready in the tracker when a Workspace reaches
// phase Ready.
func (s *Suite) ensureWorkspaceWatch(ctx context.Context, parent string) error {
	c, err := s.watchClient(bench.ClusterURL(s.t.Base, parent))
	if err != nil {
		return err
	}
	ri := c.Resource(WorkspacesGVR)
	h := func(u *unstructured.Unstructured, deleted bool, at time.Time) {
		if !deleted && Phase(u) == PhaseReady {
			s.tracker.MarkReady(parent+":"+u.GetName(), at)
		}
	}
	return s.watches.ensure(ctx, "workspaces|"+parent, func(ctx context.Context, synced func()) {
		WatchObjects(ctx, ri, h, synced)
	})
}

func (s *Suite) stopWorkspaceWatch(parent string) { s.watches.stop("workspaces|" + parent) }

// createWorkspace registers parent:name in the tracker and creates the
// Workspace, retrying the errors expected right after parent became Ready.
// On failure the key is marked failed.
func (s *Suite) createWorkspace(ctx context.Context, parent, name, typeName string) error {
	key := parent + ":" + name
	c, err := s.client(parent)
	if err != nil {
		s.tracker.Fail(key)
		return err
	}
	s.tracker.Expect(key, time.Now())
	err = kubebench.Retry(ctx, 30*time.Second, kubebench.Settling, func() error {
		_, err := c.Resource(WorkspacesGVR).Create(ctx, Workspace(name, typeName), metav1.CreateOptions{})
		return err
	})
	if err != nil {
		s.tracker.Fail(key)
		return fmt.Errorf("create workspace %s: %w", key, err)
	}
	return nil
}

// createWorkspaces creates parent:<names[i]> with workers clients and
// returns the run result and the keys of the Workspaces created.
func (s *Suite) createWorkspaces(ctx context.Context, parent string, names []string, typeName string, workers int) (bench.RunResult, []string) {
	ok := make([]bool, len(names))
	res := bench.Run(ctx, bench.RunOptions{Total: len(names), Workers: workers, MaxErrors: 10},
		func(ctx context.Context, _, i int) error {
			if err := s.createWorkspace(ctx, parent, names[i], typeName); err != nil {
				return err
			}
			ok[i] = true
			return nil
		})
	var keys []string
	for i, n := range names {
		if ok[i] {
			keys = append(keys, parent+":"+n)
		}
	}
	return res, keys
}

// createOrg creates an organization workspace <prefix><random> in root,
// waits until it is Ready and returns its path.
func (s *Suite) createOrg(ctx context.Context, prefix string) (string, error) {
	if err := s.ensureWorkspaceWatch(ctx, "root"); err != nil {
		return "", fmt.Errorf("watch workspaces in root: %w", err)
	}
	name := prefix + bench.RandomSuffix(6)
	s.o.Logf("creating organization workspace root:%s", name)
	if err := s.createWorkspace(ctx, "root", name, "organization"); err != nil {
		return "", err
	}
	s.mu.Lock()
	s.orgs = append(s.orgs, name)
	s.mu.Unlock()
	if err := s.tracker.Wait(ctx, "root:"+name); err != nil {
		return "", fmt.Errorf("organization root:%s not Ready: %w", name, err)
	}
	return "root:" + name, nil
}

// waitGone polls the Workspace parent:name until GET returns 404 and
// returns when it did.
func (s *Suite) waitGone(ctx context.Context, parent, name string, interval time.Duration) (time.Time, error) {
	c, err := s.client(parent)
	if err != nil {
		return time.Time{}, err
	}
	for {
		_, err := c.Resource(WorkspacesGVR).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return time.Now(), nil
		}
		if err != nil && !kubebench.Transient(err) && ctx.Err() == nil {
			return time.Time{}, fmt.Errorf("get workspace %s:%s: %w", parent, name, err)
		}
		select {
		case <-ctx.Done():
			return time.Time{}, fmt.Errorf("workspace %s:%s still there: %w", parent, name, context.Cause(ctx))
		case <-time.After(interval):
		}
	}
}

// Cleanup deletes the organizations the suite created (with everything in
// them) and waits up to a minute for them to go. Errors are recorded in
// rep.
func (s *Suite) Cleanup(ctx context.Context, rep *bench.Report) {
	s.mu.Lock()
	orgs := s.orgs
	s.orgs = nil
	s.mu.Unlock()
	c, err := s.client("root")
	if err != nil {
		rep.Error(fmt.Errorf("cleanup: %w", err))
		return
	}
	for _, name := range orgs {
		s.o.Logf("deleting workspace root:%s and everything below it", name)
		err := c.Resource(WorkspacesGVR).Delete(ctx, name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			rep.Error(fmt.Errorf("cleanup: delete workspace root:%s: %w", name, err))
		}
	}
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for _, name := range orgs {
		if _, err := s.waitGone(wctx, "root", name, 250*time.Millisecond); err != nil {
			s.o.Logf("cleanup: %v (the server keeps deleting it)", err)
		}
	}
}
