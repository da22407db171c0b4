package kcpbench

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/meshplane/meshplane/bench/pkg/bench"
)

// Published kcp figures the rows can be compared with.
const (
	kcpWorkspacesRef = "kcp v0.32.3: 100 Ready in 57 s"
	kcpBindingsRef   = "kcp v0.32.3: 20 Bound in ~6 s"
	kcpListRef       = "kcp v0.32.3: 100 objects p50 28 ms"
)

func clientsLabel(n int) string {
	if n == 1 {
		return "1 client"
	}
	return fmt.Sprintf("%d clients", n)
}

func (s *Suite) addLive(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.liveWS += n
}

func (s *Suite) live() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.liveWS
}

// runWorkspaces creates an organization and runs the flat, tree and large
// workspace phases in it.
func (s *Suite) runWorkspaces(ctx context.Context, rep *bench.Report, fail func(string, error)) error {
	sctx, cancel := context.WithTimeout(ctx, s.o.PhaseTimeout)
	org, err := s.createOrg(sctx, "bench-ws-")
	if err == nil {
		err = s.ensureWorkspaceWatch(sctx, org)
	}
	cancel()
	if err != nil {
		return err
	}
	defer s.stopWorkspaceWatch(org)
	rep.Info("workspace_org", "workspace benchmark organization", org)

	if n := s.o.Workspaces; n > 0 {
		fail("flat workspaces (1 client)", s.phaseFlat(ctx, rep, org, "f1-", n, 1, false))
		if ctx.Err() == nil {
			fail(fmt.Sprintf("flat workspaces (%s)", clientsLabel(s.o.Workers)),
				s.phaseFlat(ctx, rep, org, fmt.Sprintf("f%d-", s.o.Workers), n, s.o.Workers, s.o.PID > 0))
		}
	}
	if s.o.TreeSize > 0 && ctx.Err() == nil {
		fail("workspace tree", s.phaseTree(ctx, rep, org))
	}
	if s.o.Large > 0 && ctx.Err() == nil {
		fail(fmt.Sprintf("%d flat workspaces", s.o.Large), s.phaseLarge(ctx, rep, org))
	}
	return nil
}

// flatNames returns n workspace names <prefix><i>.
func flatNames(prefix string, n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("%s%05d", prefix, i)
	}
	return names
}

// createFlat creates n universal workspaces in org with workers clients,
// waits for them to be Ready and records the Ready rate, the time to the
// last Ready and the create-to-Ready latency under key.
func (s *Suite) createFlat(ctx context.Context, rep *bench.Report, org, prefix string, n, workers int, key, detail string) (Span, error) {
	s.o.Logf("creating %d workspaces flat in %s with %s", n, org, clientsLabel(workers))
	res, keys := s.createWorkspaces(ctx, org, flatNames(prefix, n), "universal", workers)
	_, werr := s.tracker.WaitAll(ctx, keys)
	span := s.tracker.Span(keys)
	s.addLive(span.Ready)
	s.o.Logf("%d of %d workspaces Ready after %.2fs", span.Ready, n, span.Elapsed().Seconds())
	s.addSpan(rep, key, detail, span, res)
	return span, errors.Join(res.Err(), werr)
}

// addSpan records the rows of a workspace creation run.
func (s *Suite) addSpan(rep *bench.Report, key, detail string, span Span, res bench.RunResult) {
	if span.Ready > 0 {
		rep.Add(key+"_ready_per_s", fmt.Sprintf("workspaces Ready/s (%s; %s)", detail, kcpWorkspacesRef), span.Rate(), bench.UnitPerSecond)
		rep.Add(key+"_ready_s", fmt.Sprintf("first create to last Ready (%d of %d workspaces, %s)", span.Ready, span.Expected, detail), span.Elapsed().Seconds(), bench.UnitSeconds)
		rep.AddLatency(key+"_create_to_ready", "workspace create to Ready", detail, bench.Summarize(span.Latencies))
	}
	rep.AddErrors(key+"_create", "workspace creates", detail, res)
}

// phaseFlat runs one flat run; with rss the server's RSS growth per Ready
// workspace is recorded too.
func (s *Suite) phaseFlat(parent context.Context, rep *bench.Report, org, prefix string, n, workers int, rss bool) error {
	ctx, cancel := context.WithTimeout(parent, s.o.PhaseTimeout)
	defer cancel()
	var before memory
	if rss {
		m, err := s.memory(ctx)
		if err != nil {
			return err
		}
		before = m
	}
	key := fmt.Sprintf("workspaces_flat_%dc", workers)
	detail := fmt.Sprintf("%d flat, %s", n, clientsLabel(workers))
	span, err := s.createFlat(ctx, rep, org, prefix, n, workers, key, detail)
	if rss && span.Ready > 0 {
		err = errors.Join(err, s.memoryGrowth(ctx, rep, "flat_workspaces", "after flat workspaces", detail, before, span.Ready))
	}
	return err
}

// memory is the server's RSS and, where it serves its heap profile, its
// live Go heap after a forced garbage collection.
type memory struct {
	rss, heap int64
	heapOK    bool
}

// memory samples the server's memory after Settle.
func (s *Suite) memory(ctx context.Context) (memory, error) {
	rss, err := s.rss(ctx, nil, "", "", true)
	if err != nil {
		return memory{}, err
	}
	heap, ok := s.liveHeap(ctx)
	return memory{rss: rss, heap: heap, heapOK: ok}, nil
}

// memoryGrowth samples the server's memory again and records it and its
// growth per Ready workspace since before: RSS (what the process holds,
// garbage not yet collected included) and the live heap after a forced
// garbage collection (what the workspaces' objects and state take).
func (s *Suite) memoryGrowth(ctx context.Context, rep *bench.Report, key, when, detail string, before memory, ready int) error {
	after, err := s.memory(ctx)
	if err != nil {
		return err
	}
	rep.Add("rss_"+key+"_mib", fmt.Sprintf("server RSS %s (%s)", when, detail), bench.MiB(after.rss), bench.UnitMiB)
	rep.Add("rss_per_workspace_"+key+"_kib", fmt.Sprintf("server RSS growth per Ready workspace (%s)", detail),
		float64(after.rss-before.rss)/1024/float64(ready), bench.UnitKiB)
	if before.heapOK && after.heapOK {
		rep.Add("heap_"+key+"_mib", fmt.Sprintf("server live heap after GC %s (%s)", when, detail), bench.MiB(after.heap), bench.UnitMiB)
		rep.Add("heap_per_workspace_"+key+"_kib", fmt.Sprintf("server live heap growth per Ready workspace, after GC (%s)", detail),
			float64(after.heap-before.heap)/1024/float64(ready), bench.UnitKiB)
	}
	return nil
}

// phaseTree creates TreeSize workspaces as a tree with Workers clients
// (each workspace as soon as its parent is Ready), then deletes the tree's
// top workspace and measures until it is gone.
func (s *Suite) phaseTree(parent context.Context, rep *bench.Report, org string) error {
	ctx, cancel := context.WithTimeout(parent, s.o.PhaseTimeout)
	defer cancel()
	nodes := TreeLayout(org, "t-", s.o.TreeSize, s.o.TreeFanout)
	kids := Children(nodes)
	defer func() {
		for p := range nodes {
			if len(kids[p]) > 0 {
				s.stopWorkspaceWatch(nodes[p].Path)
			}
		}
	}()
	// Release the watch on a parent once all its children are Ready, so
	// that at most a few parents are watched at a time.
	go func() {
		for p := range nodes {
			if len(kids[p]) == 0 {
				continue
			}
			for _, k := range kids[p] {
				_ = s.tracker.Wait(ctx, nodes[k].Path)
			}
			if ctx.Err() != nil {
				return
			}
			s.stopWorkspaceWatch(nodes[p].Path)
		}
	}()

	detail := fmt.Sprintf("%d as a tree, fan-out %d, depth %d, %s", len(nodes), s.o.TreeFanout, TreeDepth(nodes), clientsLabel(s.o.Workers))
	s.o.Logf("creating %d workspaces as a tree (fan-out %d) in %s with %s", len(nodes), s.o.TreeFanout, org, clientsLabel(s.o.Workers))
	ok := make([]bool, len(nodes))
	res := bench.Run(ctx, bench.RunOptions{Total: len(nodes), Workers: s.o.Workers, MaxErrors: 10},
		func(ctx context.Context, _, i int) error {
			pp := ParentPath(org, nodes, i)
			if i > 0 {
				if err := s.tracker.Wait(ctx, pp); err != nil {
					s.tracker.Fail(nodes[i].Path)
					return fmt.Errorf("parent of %s: %w", nodes[i].Path, err)
				}
				if err := s.ensureWorkspaceWatch(ctx, pp); err != nil {
					s.tracker.Fail(nodes[i].Path)
					return fmt.Errorf("watch workspaces in %s: %w", pp, err)
				}
			}
			if err := s.createWorkspace(ctx, pp, nodes[i].Name, "universal"); err != nil {
				return err
			}
			ok[i] = true
			return nil
		})
	var keys []string
	for i, nd := range nodes {
		if ok[i] {
			keys = append(keys, nd.Path)
		}
	}
	_, werr := s.tracker.WaitAll(ctx, keys)
	span := s.tracker.Span(keys)
	s.addLive(span.Ready)
	s.o.Logf("%d of %d tree workspaces Ready after %.2fs", span.Ready, len(nodes), span.Elapsed().Seconds())
	s.addSpan(rep, "workspaces_tree", detail, span, res)
	if err := errors.Join(res.Err(), werr); err != nil || !ok[0] {
		return err
	}
	return s.deleteTree(parent, rep, org, nodes[0].Name, span.Ready)
}

// deleteTree deletes org:top and measures until GET returns 404.
func (s *Suite) deleteTree(parent context.Context, rep *bench.Report, org, top string, size int) error {
	ctx, cancel := context.WithTimeout(parent, s.o.PhaseTimeout)
	defer cancel()
	c, err := s.client(org)
	if err != nil {
		return err
	}
	s.o.Logf("deleting workspace %s:%s and its %d-workspace subtree", org, top, size-1)
	t0 := time.Now()
	if err := c.Resource(WorkspacesGVR).Delete(ctx, top, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete %s:%s: %w", org, top, err)
	}
	gone, err := s.waitGone(ctx, org, top, 50*time.Millisecond)
	if err != nil {
		return err
	}
	s.addLive(-size)
	secs := gone.Sub(t0).Seconds()
	s.o.Logf("tree gone after %.2fs", secs)
	rep.Add("workspace_tree_delete_s", fmt.Sprintf("workspace tree delete (%d workspaces: DELETE of the top until GET 404)", size), secs, bench.UnitSeconds)
	return nil
}

// phaseLarge creates Large flat workspaces with Workers clients and
// samples the server's RSS afterwards.
func (s *Suite) phaseLarge(parent context.Context, rep *bench.Report, org string) error {
	ctx, cancel := context.WithTimeout(parent, s.o.PhaseTimeout)
	defer cancel()
	n := s.o.Large
	detail := fmt.Sprintf("%d flat, %s", n, clientsLabel(s.o.Workers))
	var before memory
	if s.o.PID > 0 {
		m, err := s.memory(ctx)
		if err != nil {
			return err
		}
		before = m
	}
	span, err := s.createFlat(ctx, rep, org, "x-", n, s.o.Workers, fmt.Sprintf("workspaces_flat_%d", n), detail)
	if s.o.PID > 0 && span.Ready > 0 {
		live := s.live()
		err = errors.Join(err, s.memoryGrowth(ctx, rep, "large_workspaces",
			fmt.Sprintf("with %d Ready benchmark workspaces (target: 10,000 under 2 GiB)", live), detail, before, span.Ready))
	}
	return err
}
