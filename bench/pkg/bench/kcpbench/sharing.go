package kcpbench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/meshplane/meshplane/bench/pkg/bench"
	"github.com/meshplane/meshplane/bench/pkg/bench/kubebench"
)

// widgetNamespace is created in every consumer for the widgets.
const widgetNamespace = "bench"

// sharing is the state of the API sharing phases.
type sharing struct {
	org, provider string
	workspaces    []string // consumer workspace paths (Ready), in creation order
	bound         int      // workspaces[:bound] are bound and have the widget namespace
	vwURL         string   // the export's virtual workspace URL
}

func bindingKey(consumer string) string { return consumer + "|apibinding" }

// runSharing sets up a provider with the widgets export in a new
// organization and runs the binding, LIST and watch phases with consumers
// in the same organization.
func (s *Suite) runSharing(ctx context.Context, rep *bench.Report, fail func(string, error)) error {
	sctx, cancel := context.WithTimeout(ctx, s.o.PhaseTimeout)
	sh, err := s.setupProvider(sctx, rep)
	cancel()
	if err != nil {
		return err
	}
	defer s.stopWorkspaceWatch(sh.org)

	if s.o.Bindings > 0 {
		fail("APIBindings", s.phaseBindings(ctx, rep, sh))
	}
	if s.o.Lists > 0 && s.o.ListObjects > 0 && ctx.Err() == nil {
		fail("wildcard LIST", s.phaseList(ctx, rep, sh, "vw_list", s.o.ListConsumers, s.o.ListObjects, s.o.Lists, kcpListRef))
	}
	if s.o.LargeLists > 0 && s.o.LargeObjects > 0 && ctx.Err() == nil {
		fail("wildcard LIST (large)", s.phaseList(ctx, rep, sh, "vw_list_large", s.o.LargeConsumers, s.o.LargeObjects, s.o.LargeLists, ""))
	}
	if s.o.WatchEvents > 0 && ctx.Err() == nil {
		fail("wildcard watch", s.phaseWatch(ctx, rep, sh))
	}
	return nil
}

// setupProvider creates the organization, the provider workspace, the
// APIResourceSchema and the APIExport, and waits for the export's
// identity.
func (s *Suite) setupProvider(ctx context.Context, rep *bench.Report) (*sharing, error) {
	org, err := s.createOrg(ctx, "bench-api-")
	if err != nil {
		return nil, err
	}
	rep.Info("api_org", "API sharing organization", org)
	if err := s.ensureWorkspaceWatch(ctx, org); err != nil {
		return nil, fmt.Errorf("watch workspaces in %s: %w", org, err)
	}
	sh := &sharing{org: org, provider: org + ":provider"}
	if err := s.createWorkspace(ctx, org, "provider", "universal"); err != nil {
		return nil, err
	}
	if err := s.tracker.Wait(ctx, sh.provider); err != nil {
		return nil, fmt.Errorf("provider workspace not Ready: %w", err)
	}
	c, err := s.client(sh.provider)
	if err != nil {
		return nil, err
	}
	create := func(gvrName string, u *unstructured.Unstructured, ri func() error) error {
		err := kubebench.Retry(ctx, 30*time.Second, kubebench.Settling, ri)
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create %s %s in %s: %w", gvrName, u.GetName(), sh.provider, err)
		}
		return nil
	}
	schema := APIResourceSchema()
	if err := create("APIResourceSchema", schema, func() error {
		_, err := c.Resource(SchemasGVR).Create(ctx, schema, metav1.CreateOptions{})
		return err
	}); err != nil {
		return nil, err
	}
	export := APIExport()
	t0 := time.Now()
	if err := create("APIExport", export, func() error {
		_, err := c.Resource(ExportsGVR).Create(ctx, export, metav1.CreateOptions{})
		return err
	}); err != nil {
		return nil, err
	}
	var hash string
	err = poll(ctx, 50*time.Millisecond, func() (bool, error) {
		u, err := c.Resource(ExportsGVR).Get(ctx, ExportName, metav1.GetOptions{})
		if err != nil {
			return false, ignoreSettling(err)
		}
		hash = IdentityHash(u)
		return hash != "", nil
	})
	if err != nil {
		return nil, fmt.Errorf("APIExport %s in %s has no status.identityHash: %w", ExportName, sh.provider, err)
	}
	s.o.Logf("APIExport %s in %s has identity %.12s...", ExportName, sh.provider, hash)
	rep.Info("api_provider", "API provider workspace", sh.provider)
	rep.Add("apiexport_identity_s", "APIExport create to status.identityHash", time.Since(t0).Seconds(), bench.UnitSeconds)
	return sh, nil
}

// ignoreSettling turns the errors expected while things settle into nil.
func ignoreSettling(err error) error {
	if kubebench.Settling(err) {
		return nil
	}
	return err
}

// poll calls cond every interval until it returns true or an error, or ctx
// ends.
func poll(ctx context.Context, interval time.Duration, cond func() (bool, error)) error {
	for {
		done, err := cond()
		if err != nil {
			return err
		}
		if done {
			return nil
		}
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-time.After(interval):
		}
	}
}

// ensureConsumerWorkspaces makes sure at least n consumer workspaces exist
// and are Ready (not timed).
func (s *Suite) ensureConsumerWorkspaces(ctx context.Context, sh *sharing, n int) error {
	have := len(sh.workspaces)
	if have >= n {
		return nil
	}
	names := make([]string, 0, n-have)
	for i := have; i < n; i++ {
		names = append(names, fmt.Sprintf("c-%04d", i))
	}
	s.o.Logf("creating %d consumer workspaces in %s", len(names), sh.org)
	res, keys := s.createWorkspaces(ctx, sh.org, names, "universal", s.o.Workers)
	if err := res.Err(); err != nil {
		return fmt.Errorf("consumer workspaces: %w", err)
	}
	if _, err := s.tracker.WaitAll(ctx, keys); err != nil {
		return fmt.Errorf("consumer workspaces: %w", err)
	}
	sh.workspaces = append(sh.workspaces, keys...)
	s.addLive(len(keys))
	return nil
}

// ensureBindingWatch watches the APIBindings of consumer, marking
// bindingKey(consumer) ready when the benchmark's binding is Bound.
func (s *Suite) ensureBindingWatch(ctx context.Context, consumer string) error {
	c, err := s.watchClient(bench.ClusterURL(s.t.Base, consumer))
	if err != nil {
		return err
	}
	ri := c.Resource(BindingsGVR)
	h := func(u *unstructured.Unstructured, deleted bool, at time.Time) {
		if !deleted && u.GetName() == BindingName && Phase(u) == PhaseBound {
			s.tracker.MarkReady(bindingKey(consumer), at)
		}
	}
	return s.watches.ensure(ctx, "apibindings|"+consumer, func(ctx context.Context, synced func()) {
		WatchObjects(ctx, ri, h, synced)
	})
}

// bind creates the APIBinding in each consumer with Workers clients (the
// binding watches are set up first, untimed) and waits until all are
// Bound.
func (s *Suite) bind(ctx context.Context, sh *sharing, consumers []string) (Span, bench.RunResult, error) {
	defer func() {
		for _, c := range consumers {
			s.watches.stop("apibindings|" + c)
		}
	}()
	res := bench.Run(ctx, bench.RunOptions{Total: len(consumers), Workers: s.o.Workers, MaxErrors: 0},
		func(ctx context.Context, _, i int) error { return s.ensureBindingWatch(ctx, consumers[i]) })
	if err := res.Err(); err != nil {
		return Span{}, bench.RunResult{}, fmt.Errorf("watch APIBindings: %w", err)
	}
	ok := make([]bool, len(consumers))
	res = bench.Run(ctx, bench.RunOptions{Total: len(consumers), Workers: s.o.Workers, MaxErrors: 10},
		func(ctx context.Context, _, i int) error {
			key := bindingKey(consumers[i])
			c, err := s.client(consumers[i])
			if err != nil {
				s.tracker.Fail(key)
				return err
			}
			s.tracker.Expect(key, time.Now())
			err = kubebench.Retry(ctx, 30*time.Second, kubebench.Settling, func() error {
				_, err := c.Resource(BindingsGVR).Create(ctx, APIBinding(sh.provider), metav1.CreateOptions{})
				return err
			})
			if err != nil {
				s.tracker.Fail(key)
				return fmt.Errorf("create APIBinding in %s: %w", consumers[i], err)
			}
			ok[i] = true
			return nil
		})
	var keys []string
	for i, c := range consumers {
		if ok[i] {
			keys = append(keys, bindingKey(c))
		}
	}
	_, werr := s.tracker.WaitAll(ctx, keys)
	return s.tracker.Span(keys), res, errors.Join(res.Err(), werr)
}

// prepare creates the widget namespace in each consumer and marks them
// bound.
func (s *Suite) prepare(ctx context.Context, sh *sharing, upTo int) error {
	consumers := sh.workspaces[sh.bound:upTo]
	res := bench.Run(ctx, bench.RunOptions{Total: len(consumers), Workers: s.o.Workers, MaxErrors: 10},
		func(ctx context.Context, _, i int) error {
			c, err := s.client(consumers[i])
			if err != nil {
				return err
			}
			err = kubebench.Retry(ctx, 30*time.Second, kubebench.Settling, func() error {
				_, err := c.Resource(NamespacesGVR).Create(ctx, Namespace(widgetNamespace), metav1.CreateOptions{})
				return err
			})
			if err != nil && !apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("create namespace %s in %s: %w", widgetNamespace, consumers[i], err)
			}
			return nil
		})
	if err := res.Err(); err != nil {
		return err
	}
	sh.bound = upTo
	return s.endpointURL(ctx, sh)
}

// ensureConsumers makes sure n consumers are bound and prepared (not
// timed).
func (s *Suite) ensureConsumers(ctx context.Context, sh *sharing, n int) error {
	if sh.bound >= n {
		return nil
	}
	if err := s.ensureConsumerWorkspaces(ctx, sh, n); err != nil {
		return err
	}
	s.o.Logf("binding %s in %d more consumers", ExportName, n-sh.bound)
	if _, _, err := s.bind(ctx, sh, sh.workspaces[sh.bound:n]); err != nil {
		return err
	}
	return s.prepare(ctx, sh, n)
}

// endpointURL reads the virtual workspace URL from the export's endpoint
// slice (kcp fills it once a binding exists).
func (s *Suite) endpointURL(ctx context.Context, sh *sharing) error {
	if sh.vwURL != "" {
		return nil
	}
	c, err := s.client(sh.provider)
	if err != nil {
		return err
	}
	err = poll(ctx, 100*time.Millisecond, func() (bool, error) {
		u, err := c.Resource(EndpointSliceGVR).Get(ctx, ExportName, metav1.GetOptions{})
		if err != nil {
			return false, ignoreSettling(err)
		}
		sh.vwURL = EndpointURL(u)
		return sh.vwURL != "", nil
	})
	if err != nil {
		return fmt.Errorf("APIExportEndpointSlice %s in %s has no endpoint URL: %w", ExportName, sh.provider, err)
	}
	s.o.Logf("virtual workspace URL: %s", sh.vwURL)
	return nil
}

// phaseBindings times Bindings APIBindings from the first create to the
// last Bound; the consumer workspaces are created first, untimed.
func (s *Suite) phaseBindings(parent context.Context, rep *bench.Report, sh *sharing) error {
	ctx, cancel := context.WithTimeout(parent, s.o.PhaseTimeout)
	defer cancel()
	n := s.o.Bindings
	if err := s.ensureConsumerWorkspaces(ctx, sh, sh.bound+n); err != nil {
		return err
	}
	consumers := sh.workspaces[sh.bound : sh.bound+n]
	detail := fmt.Sprintf("%d consumers, %s", n, clientsLabel(s.o.Workers))
	s.o.Logf("creating %d APIBindings with %s", n, clientsLabel(s.o.Workers))
	span, res, err := s.bind(ctx, sh, consumers)
	if span.Ready > 0 {
		s.o.Logf("%d of %d APIBindings Bound after %.2fs", span.Ready, n, span.Elapsed().Seconds())
		rep.Add("apibindings_bound_s", fmt.Sprintf("first APIBinding create to last Bound (%d of %s; %s)", span.Ready, detail, kcpBindingsRef),
			span.Elapsed().Seconds(), bench.UnitSeconds)
		rep.AddLatency("apibinding_create_to_bound", "APIBinding create to Bound", detail, bench.Summarize(span.Latencies))
	}
	rep.AddErrors("apibinding_create", "APIBinding creates", detail, res)
	if err != nil {
		return err
	}
	if err := s.prepare(ctx, sh, sh.bound+n); err != nil {
		return err
	}
	rep.Info("vw_url", "APIExport virtual workspace URL", sh.vwURL)
	return nil
}

// widgetName is the name of object j of a set spread over n consumers:
// it lives in consumer j%n as w-<j/n>, so a smaller set over fewer
// consumers is a subset of a larger one.
func widgetName(j, consumers int) (consumer int, name string) {
	return j % consumers, fmt.Sprintf("w-%05d", j/consumers)
}

// createWidgets makes sure objects widgets exist spread over the first
// consumers consumers, created with ObjectWorkers clients.
func (s *Suite) createWidgets(ctx context.Context, sh *sharing, consumers, objects int) error {
	s.o.Logf("creating %d widgets in %d consumers with %s", objects, consumers, clientsLabel(s.o.ObjectWorkers))
	res := bench.Run(ctx, bench.RunOptions{Total: objects, Workers: s.o.ObjectWorkers, MaxErrors: 10},
		func(ctx context.Context, _, j int) error {
			ci, name := widgetName(j, consumers)
			c, err := s.client(sh.workspaces[ci])
			if err != nil {
				return err
			}
			ri := c.Resource(WidgetsGVR).Namespace(widgetNamespace)
			err = kubebench.Retry(ctx, 30*time.Second, kubebench.Settling, func() error {
				_, err := ri.Create(ctx, Widget(name, widgetNamespace, time.Now()), metav1.CreateOptions{})
				return err
			})
			if err != nil && !apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("create widget %s in %s: %w", name, sh.workspaces[ci], err)
			}
			return nil
		})
	return res.Err()
}

// wildcardURL is the virtual workspace URL listing widgets of all
// consumers.
func wildcardURL(vwURL string) string {
	return strings.TrimRight(vwURL, "/") + "/clusters/*/apis/" + WidgetGroup + "/v1/widgets"
}

// listCount GETs url through the shared client and counts the items.
func (s *Suite) listCount(ctx context.Context, url string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", s.t.Config.UserAgent)
	resp, err := s.t.HTTP.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return 0, fmt.Errorf("GET %s: %s: %s", url, resp.Status, strings.TrimSpace(string(b)))
	}
	return countItems(resp.Body)
}

// countItems decodes a list document just far enough to count its items.
func countItems(r io.Reader) (int, error) {
	var l struct {
		Kind  string            `json:"kind"`
		Items []json.RawMessage `json:"items"`
	}
	if err := json.NewDecoder(r).Decode(&l); err != nil {
		return 0, fmt.Errorf("decode list: %w", err)
	}
	if !strings.HasSuffix(l.Kind, "List") {
		return 0, fmt.Errorf("not a list: kind %q", l.Kind)
	}
	return len(l.Items), nil
}

// phaseList spreads objects widgets over consumers bound consumers and
// LISTs them lists times through the virtual workspace's wildcard.
func (s *Suite) phaseList(parent context.Context, rep *bench.Report, sh *sharing, key string, consumers, objects, lists int, ref string) error {
	ctx, cancel := context.WithTimeout(parent, s.o.PhaseTimeout)
	defer cancel()
	if err := s.ensureConsumers(ctx, sh, consumers); err != nil {
		return err
	}
	if err := s.createWidgets(ctx, sh, consumers, objects); err != nil {
		return err
	}
	url := wildcardURL(sh.vwURL)
	items, err := s.listCount(ctx, url) // warm-up, untimed
	if err != nil {
		return err
	}
	if items < objects {
		return fmt.Errorf("wildcard LIST returned %d widgets, want at least %d", items, objects)
	}
	s.o.Logf("listing %d widgets through %s %d times", items, url, lists)
	res := bench.Run(ctx, bench.RunOptions{Total: lists, Workers: 1, MaxErrors: 3},
		func(ctx context.Context, _, _ int) error {
			n, err := s.listCount(ctx, url)
			if err == nil {
				items = n
			}
			return err
		})
	detail := fmt.Sprintf("%d objects in %d consumers", items, consumers)
	if sum := res.Summary(); sum.N > 0 {
		p50detail := detail
		if ref != "" {
			p50detail += "; " + ref
		}
		rep.Add(key+"_p50_ms", "wildcard LIST via APIExport virtual workspace p50 ("+p50detail+")", bench.Millis(sum.P50), bench.UnitMillis)
		rep.Add(key+"_p99_ms", "wildcard LIST via APIExport virtual workspace p99 ("+detail+")", bench.Millis(sum.P99), bench.UnitMillis)
	}
	rep.AddErrors(key, "wildcard LIST", "", res)
	return res.Err()
}

// eventRecorder remembers when a watch first delivered each object name.
type eventRecorder struct {
	mu     sync.Mutex
	seen   map[string]time.Time
	want   int
	all    chan struct{}
	prefix string
}

func newEventRecorder(prefix string, want int) *eventRecorder {
	return &eventRecorder{seen: map[string]time.Time{}, want: want, all: make(chan struct{}), prefix: prefix}
}

func (r *eventRecorder) record(name string, at time.Time) {
	if !strings.HasPrefix(name, r.prefix) {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.seen[name]; ok {
		return
	}
	r.seen[name] = at
	if len(r.seen) == r.want {
		close(r.all)
	}
}

func (r *eventRecorder) at(name string) (time.Time, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	t, ok := r.seen[name]
	return t, ok
}

// paceSchedule returns when the k-th of a paced sequence of operations
// starting at begin is due at rate per second.
func paceSchedule(begin time.Time, k int, rate float64) time.Time {
	return begin.Add(time.Duration(float64(k) / rate * float64(time.Second)))
}

// phaseWatch watches widgets through the virtual workspace's wildcard
// while creating WatchEvents widgets at WatchRate per second over
// WatchConsumers consumers, and records the latency from each create
// request's start to the ADDED event.
func (s *Suite) phaseWatch(parent context.Context, rep *bench.Report, sh *sharing) error {
	ctx, cancel := context.WithTimeout(parent, s.o.PhaseTimeout)
	defer cancel()
	consumers, events := s.o.WatchConsumers, s.o.WatchEvents
	if err := s.ensureConsumers(ctx, sh, consumers); err != nil {
		return err
	}
	wc, err := s.watchClient(strings.TrimRight(sh.vwURL, "/") + "/clusters/*")
	if err != nil {
		return err
	}
	ri := wc.Resource(WidgetsGVR)
	list, err := ri.List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		return fmt.Errorf("wildcard list for a resource version: %w", err)
	}
	w, err := ri.Watch(ctx, metav1.ListOptions{ResourceVersion: list.GetResourceVersion()})
	if err != nil {
		return fmt.Errorf("wildcard watch: %w", err)
	}
	defer w.Stop()

	prefix := "ev-"
	rec := newEventRecorder(prefix, events)
	watchErr := make(chan error, 1)
	go func() {
		for ev := range w.ResultChan() {
			at := time.Now()
			switch ev.Type {
			case watch.Added:
				if u, ok := ev.Object.(*unstructured.Unstructured); ok {
					rec.record(u.GetName(), at)
				}
			case watch.Error:
				watchErr <- apierrors.FromObject(ev.Object)
				return
			}
		}
		watchErr <- errors.New("watch closed")
	}()

	s.o.Logf("creating %d widgets at %g/s over %d consumers while watching %s", events, s.o.WatchRate, consumers, wildcardURL(sh.vwURL))
	starts := make([]time.Time, events)
	acked := make([]time.Time, events) // create response received
	created := make([]bool, events)
	sem := make(chan struct{}, s.o.ObjectWorkers)
	var wg sync.WaitGroup
	var firstErr error
	var errMu sync.Mutex
	begin := time.Now()
loop:
	for k := range events {
		select {
		case <-ctx.Done():
			break loop
		case <-time.After(time.Until(paceSchedule(begin, k, s.o.WatchRate))):
		}
		select {
		case <-ctx.Done():
			break loop
		case sem <- struct{}{}:
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			ci := k % consumers
			name := fmt.Sprintf("%s%05d", prefix, k)
			c, err := s.client(sh.workspaces[ci])
			if err == nil {
				starts[k] = time.Now()
				_, err = c.Resource(WidgetsGVR).Namespace(widgetNamespace).Create(ctx, Widget(name, widgetNamespace, starts[k]), metav1.CreateOptions{})
			}
			if err != nil {
				errMu.Lock()
				if firstErr == nil {
					firstErr = fmt.Errorf("create widget %s in %s: %w", name, sh.workspaces[ci], err)
				}
				errMu.Unlock()
				return
			}
			acked[k] = time.Now()
			created[k] = true
		}()
	}
	wg.Wait()
	createdN := 0
	for _, ok := range created {
		if ok {
			createdN++
		}
	}
	// Wait for the outstanding events: up to 30s, or 2s if creates failed.
	grace := 30 * time.Second
	if createdN < events {
		grace = 2 * time.Second
	}
	var watchEnd error
	select {
	case <-rec.all:
	case watchEnd = <-watchErr:
	case <-ctx.Done():
	case <-time.After(grace):
	}
	// The event latency includes the create itself; the create's round
	// trip and the time from its response to the event split it.
	var lat, rtt, afterAck []time.Duration
	for k := range events {
		if !created[k] {
			continue
		}
		rtt = append(rtt, acked[k].Sub(starts[k]))
		if at, ok := rec.at(fmt.Sprintf("%s%05d", prefix, k)); ok {
			lat = append(lat, max(at.Sub(starts[k]), 0))
			afterAck = append(afterAck, max(at.Sub(acked[k]), 0))
		}
	}
	detail := fmt.Sprintf("%d creates at %g/s over %d consumers, create start to ADDED", createdN, s.o.WatchRate, consumers)
	rep.AddLatency("vw_watch_event", "wildcard watch event latency", detail, bench.Summarize(lat))
	rep.AddLatency("vw_watch_create", "wildcard watch phase, create round trip", "the same creates", bench.Summarize(rtt))
	rep.AddLatency("vw_watch_after_ack", "wildcard watch event after the create's response", "0 if the event came first", bench.Summarize(afterAck))
	missing := createdN - len(lat)
	if missing > 0 || createdN < events {
		rep.Add("vw_watch_event_missing", "wildcard watch events missing or creates failed", float64(events-len(lat)), bench.UnitCount)
	}
	var errs []error
	if firstErr != nil {
		errs = append(errs, fmt.Errorf("%d of %d creates failed, first: %w", events-createdN, events, firstErr))
	}
	if missing > 0 {
		why := "within the grace period"
		if watchEnd != nil {
			why = fmt.Sprintf("(the watch ended early: %v)", watchEnd)
		}
		errs = append(errs, fmt.Errorf("%d of %d created widgets never arrived on the watch %s", missing, createdN, why))
	}
	return errors.Join(errs...)
}
