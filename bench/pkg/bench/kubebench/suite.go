package kubebench

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"

	"github.com/meshplane/meshplane/bench/pkg/bench"
)

// Options configure a Suite. Zero counts skip the corresponding phase.
type Options struct {
	// Cluster is the logical cluster name or workspace path the
	// configmap phases run in (served at <base>/clusters/<Cluster>).
	Cluster   string
	Namespace string // namespace for the 1-client creates, GET and LIST

	Creates  int // configmaps per create run
	Workers  int // concurrency of the multi-client create run
	Gets     int
	ListSize int // configmaps in the listed namespace
	Lists    int
	Protobuf bool // also LIST with protobuf, alternating with the JSON LISTs

	Clusters       int    // logical clusters to create
	ClusterWorkers int    // concurrency of the cluster phase
	ClusterPrefix  string // logical cluster names are <prefix><i>

	PID    int           // server process to sample VmRSS from; 0: none
	Settle time.Duration // pause before an RSS sample taken after load

	PhaseTimeout time.Duration
	Logf         func(format string, args ...any)
}

// Suite runs the Kubernetes API phases against one Target.
type Suite struct {
	t    *Target
	o    Options
	core corev1client.CoreV1Interface

	namespaces []string // created by us, deleted by Cleanup
	touched    []bool   // logical clusters whose namespace we created
}

// NewSuite validates options and builds the client for the main cluster.
func NewSuite(t *Target, o Options) (*Suite, error) {
	if err := bench.ValidateClusterName(o.Cluster); err != nil {
		return nil, err
	}
	if o.Namespace == "" {
		return nil, errors.New("namespace must be set")
	}
	if o.Workers < 1 {
		o.Workers = 1
	}
	if o.ClusterWorkers < 1 {
		o.ClusterWorkers = 1
	}
	if o.ClusterPrefix == "" {
		o.ClusterPrefix = "bench-lc-"
	}
	if o.PhaseTimeout <= 0 {
		o.PhaseTimeout = 10 * time.Minute
	}
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	s := &Suite{t: t, o: o}
	c, err := s.coreFor(o.Cluster)
	if err != nil {
		return nil, err
	}
	s.core = c
	return s, nil
}

// coreFor returns a core/v1 client for logical cluster name sharing the
// suite's HTTP client (and thus its connection).
func (s *Suite) coreFor(name string) (corev1client.CoreV1Interface, error) {
	cfg := rest.CopyConfig(s.t.Config)
	cfg.Host = bench.ClusterURL(s.t.Base, name)
	return corev1client.NewForConfigAndClient(cfg, s.t.HTTP)
}

// protobufCoreFor is coreFor sending and accepting protobuf, as kube's
// own components do.
func (s *Suite) protobufCoreFor(name string) (corev1client.CoreV1Interface, error) {
	cfg := rest.CopyConfig(s.t.Config)
	cfg.Host = bench.ClusterURL(s.t.Base, name)
	cfg.ContentType = runtime.ContentTypeProtobuf
	cfg.AcceptContentTypes = runtime.ContentTypeProtobuf
	return corev1client.NewForConfigAndClient(cfg, s.t.HTTP)
}

func (s *Suite) multiNamespace() string { return s.o.Namespace + "-m" }

func cmName(prefix string, i int) string { return fmt.Sprintf("%s-%06d", prefix, i) }

// Run executes all enabled phases, recording metrics and errors in rep. A
// failed phase does not stop later independent phases; Run returns an
// error if any phase failed.
func (s *Suite) Run(ctx context.Context, rep *bench.Report) error {
	var failed []error
	fail := func(phase string, err error) {
		if err != nil {
			err = fmt.Errorf("%s: %w", phase, err)
			rep.Error(err)
			failed = append(failed, err)
			s.o.Logf("ERROR %v", err)
		}
	}

	rep.Info("context", "kubeconfig context", s.t.Context)
	rep.Info("server", "server", s.t.Base)
	rep.Info("cluster", "logical cluster", s.o.Cluster)
	rep.Info("namespace", "namespace", s.o.Namespace)

	if s.o.PID > 0 {
		fail("rss idle", s.sampleRSS(ctx, rep, "rss_idle_mib", "server RSS idle", true))
		fail("rss idle split", bench.SampleRSSSplit(rep, s.o.PID, "rss_idle", "idle"))
	}

	needNS := s.o.Creates > 0 || s.o.Gets > 0 || s.o.Lists > 0
	nsOK := false
	if needNS {
		err := s.setupNamespace(ctx, rep, s.o.Namespace, true)
		fail("namespace setup", err)
		nsOK = err == nil
	}

	if nsOK && s.o.Creates > 0 {
		fail("creates (1 client)", s.phaseCreates(ctx, rep, s.o.Namespace, "c1", 1))
		if s.o.Workers > 1 && ctx.Err() == nil {
			if err := s.setupNamespace(ctx, rep, s.multiNamespace(), false); err != nil {
				fail("namespace setup", err)
			} else {
				fail(fmt.Sprintf("creates (%d clients)", s.o.Workers),
					s.phaseCreates(ctx, rep, s.multiNamespace(), fmt.Sprintf("c%d", s.o.Workers), s.o.Workers))
			}
		}
	}
	if nsOK && s.o.Gets > 0 && ctx.Err() == nil {
		fail("gets", s.phaseGets(ctx, rep))
	}
	if nsOK && s.o.Lists > 0 && ctx.Err() == nil {
		fail("lists", s.phaseLists(ctx, rep))
	}
	// With a cluster phase following, its "before" sample covers this.
	if s.o.PID > 0 && needNS && s.o.Clusters == 0 && ctx.Err() == nil {
		fail("rss", s.sampleRSS(ctx, rep, "rss_after_configmaps_mib", "server RSS after configmap phases", true))
	}
	if s.o.Clusters > 0 && ctx.Err() == nil {
		fail("logical clusters", s.phaseClusters(ctx, rep))
	}
	if err := ctx.Err(); err != nil {
		failed = append(failed, err) // recorded by the caller
	}
	return errors.Join(failed...)
}

func (s *Suite) sampleRSS(ctx context.Context, rep *bench.Report, key, figure string, settle bool) error {
	_, err := s.rss(ctx, rep, key, figure, settle)
	return err
}

func (s *Suite) rss(ctx context.Context, rep *bench.Report, key, figure string, settle bool) (int64, error) {
	var wait time.Duration
	if settle {
		wait = s.o.Settle
	}
	return bench.SampleRSS(ctx, rep, s.o.PID, wait, key, figure)
}

// Transient reports server-side overload or timeout errors worth retrying.
func Transient(err error) bool {
	return apierrors.IsServerTimeout(err) || apierrors.IsTooManyRequests(err) ||
		apierrors.IsServiceUnavailable(err) || apierrors.IsTimeout(err)
}

// Settling additionally accepts the errors expected for a short while after
// a namespace was created (namespace lifecycle admission catching up).
func Settling(err error) bool {
	return Transient(err) || apierrors.IsNotFound(err) || apierrors.IsForbidden(err)
}

// Retry calls fn until it succeeds, returns an error that retryable
// rejects, or budget is exhausted.
func Retry(ctx context.Context, budget time.Duration, retryable func(error) bool, fn func() error) error {
	deadline := time.Now().Add(budget)
	for {
		err := fn()
		if err == nil || !retryable(err) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func createNamespace(ctx context.Context, c corev1client.CoreV1Interface, name string) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: benchLabel}}
	_, err := c.Namespaces().Create(ctx, ns, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

func createConfigMap(ctx context.Context, c corev1client.CoreV1Interface, ns, name string) error {
	_, err := c.ConfigMaps(ns).Create(ctx, newConfigMap(name, payload), metav1.CreateOptions{})
	return err
}

// setupNamespace creates ns and waits until a configmap can be created in
// it (a warm-up write that also opens the connection), then removes the
// warm-up object. With reportProto the negotiated HTTP protocol is
// recorded.
func (s *Suite) setupNamespace(parent context.Context, rep *bench.Report, ns string, reportProto bool) error {
	ctx, cancel := context.WithTimeout(parent, s.o.PhaseTimeout)
	defer cancel()
	s.o.Logf("creating namespace %s in logical cluster %s", ns, s.o.Cluster)
	if err := Retry(ctx, 30*time.Second, Transient, func() error { return createNamespace(ctx, s.core, ns) }); err != nil {
		if apierrors.IsForbidden(err) || apierrors.IsNotFound(err) {
			err = fmt.Errorf("%w (does the logical cluster exist? with kcp pass --cluster-path of an existing workspace, e.g. root)", err)
		}
		return fmt.Errorf("create namespace %s in %s: %w", ns, bench.ClusterURL(s.t.Base, s.o.Cluster), err)
	}
	s.namespaces = append(s.namespaces, ns)
	err := Retry(ctx, 30*time.Second, Settling, func() error {
		err := createConfigMap(ctx, s.core, ns, "warmup")
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("warm-up configmap in %s: %w", ns, err)
	}
	if err := s.core.ConfigMaps(ns).Delete(ctx, "warmup", metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete warm-up configmap: %w", err)
	}
	if reportProto {
		proto, err := s.protocol(ctx, ns)
		if err != nil {
			return fmt.Errorf("protocol probe: %w", err)
		}
		rep.Info("http_protocol", "HTTP protocol", proto)
	}
	return nil
}

// protocol issues one raw GET through the shared HTTP client and returns
// the negotiated protocol (HTTP/2.0 expected).
func (s *Suite) protocol(ctx context.Context, ns string) (string, error) {
	url := bench.ClusterURL(s.t.Base, s.o.Cluster) + "/api/v1/namespaces/" + ns
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := s.t.HTTP.Do(req)
	if err != nil {
		return "", err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return resp.Proto, nil
}

func clientsLabel(n int) string {
	if n == 1 {
		return "1 client"
	}
	return fmt.Sprintf("%d clients", n)
}

func (s *Suite) phaseCreates(parent context.Context, rep *bench.Report, ns, prefix string, workers int) error {
	ctx, cancel := context.WithTimeout(parent, s.o.PhaseTimeout)
	defer cancel()
	s.o.Logf("creating %d configmaps in %s with %s", s.o.Creates, ns, clientsLabel(workers))
	res := bench.Run(ctx, bench.RunOptions{Total: s.o.Creates, Workers: workers, MaxErrors: 10},
		func(ctx context.Context, _, i int) error {
			return createConfigMap(ctx, s.core, ns, cmName(prefix, i))
		})
	rep.AddRun(fmt.Sprintf("configmap_create_%dc", workers), "configmap creates", clientsLabel(workers), res)
	return res.Err()
}

func (s *Suite) phaseGets(parent context.Context, rep *bench.Report) error {
	ctx, cancel := context.WithTimeout(parent, s.o.PhaseTimeout)
	defer cancel()
	name := cmName("c1", 0) // created by the 1-client run; ensure it for --creates 0
	if err := createConfigMap(ctx, s.core, s.o.Namespace, name); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create GET target: %w", err)
	}
	s.o.Logf("getting configmap %s/%s %d times", s.o.Namespace, name, s.o.Gets)
	res := bench.Run(ctx, bench.RunOptions{Total: s.o.Gets, Workers: 1, MaxErrors: 10},
		func(ctx context.Context, _, _ int) error {
			_, err := s.core.ConfigMaps(s.o.Namespace).Get(ctx, name, metav1.GetOptions{})
			return err
		})
	rep.AddLatency("configmap_get", "configmap GET", "", res.Summary())
	rep.AddErrors("configmap_get", "configmap GET", "", res)
	return res.Err()
}

func (s *Suite) phaseLists(parent context.Context, rep *bench.Report) error {
	ctx, cancel := context.WithTimeout(parent, s.o.PhaseTimeout)
	defer cancel()
	ns := s.o.Namespace
	list, err := s.core.ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("initial list: %w", err)
	}
	have := make(map[string]bool, len(list.Items))
	for i := range list.Items {
		have[list.Items[i].Name] = true
	}
	var missing []string
	for i := 0; i < s.o.ListSize && len(have)+len(missing) < s.o.ListSize; i++ {
		if n := cmName("c1", i); !have[n] {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		s.o.Logf("filling %s up to %d configmaps (%d missing)", ns, s.o.ListSize, len(missing))
		res := bench.Run(ctx, bench.RunOptions{Total: len(missing), Workers: s.o.Workers, MaxErrors: 10},
			func(ctx context.Context, _, i int) error {
				err := createConfigMap(ctx, s.core, ns, missing[i])
				if apierrors.IsAlreadyExists(err) {
					return nil
				}
				return err
			})
		if err := res.Err(); err != nil {
			return fmt.Errorf("fill namespace: %w", err)
		}
	}
	s.o.Logf("listing %s %d times", ns, s.o.Lists)
	pb, err := s.protobufCoreFor(s.o.Cluster)
	if err != nil {
		return err
	}
	// With Protobuf, JSON and protobuf LISTs alternate, so that both see
	// the same machine load.
	total := s.o.Lists
	if s.o.Protobuf {
		total *= 2
	}
	var (
		mu          sync.Mutex
		items       int
		jsonLat     []time.Duration
		protobufLat []time.Duration
	)
	res := bench.Run(ctx, bench.RunOptions{Total: total, Workers: 1, MaxErrors: 3},
		func(ctx context.Context, _, i int) error {
			client, into := s.core, &jsonLat
			if s.o.Protobuf && i%2 == 1 {
				client, into = pb, &protobufLat
			}
			start := time.Now()
			l, err := client.ConfigMaps(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return err
			}
			took := time.Since(start)
			mu.Lock()
			defer mu.Unlock()
			items = len(l.Items)
			*into = append(*into, took)
			return nil
		})
	rep.Add("configmap_list_objects", "configmaps per LIST", float64(items), bench.UnitCount)
	rep.AddLatency("configmap_list", "configmap LIST", fmt.Sprintf("%d objects, JSON", items), bench.Summarize(jsonLat))
	if s.o.Protobuf {
		rep.AddLatency("configmap_list_protobuf", "configmap LIST", fmt.Sprintf("%d objects, protobuf", items), bench.Summarize(protobufLat))
	}
	rep.AddErrors("configmap_list", "configmap LIST", "", res)
	return res.Err()
}

const clusterNamespace = "bench"

func (s *Suite) clusterName(i int) string { return fmt.Sprintf("%s%d", s.o.ClusterPrefix, i) }

func (s *Suite) phaseClusters(parent context.Context, rep *bench.Report) error {
	ctx, cancel := context.WithTimeout(parent, s.o.PhaseTimeout)
	defer cancel()
	var before int64
	if s.o.PID > 0 {
		v, err := s.rss(ctx, rep, "rss_before_clusters_mib", "server RSS before logical clusters", true)
		if err != nil {
			return err
		}
		before = v
	}
	s.o.Logf("creating %d logical clusters (%s<i>: namespace %q + 1 configmap) with %s",
		s.o.Clusters, s.o.ClusterPrefix, clusterNamespace, clientsLabel(s.o.ClusterWorkers))
	touched := make([]bool, s.o.Clusters) // index i is written by one worker only
	res := bench.Run(ctx, bench.RunOptions{Total: s.o.Clusters, Workers: s.o.ClusterWorkers, MaxErrors: 10},
		func(ctx context.Context, _, i int) error {
			c, err := s.coreFor(s.clusterName(i))
			if err != nil {
				return err
			}
			if err := Retry(ctx, 5*time.Second, Transient, func() error { return createNamespace(ctx, c, clusterNamespace) }); err != nil {
				return fmt.Errorf("%s: namespace: %w", s.clusterName(i), err)
			}
			touched[i] = true
			err = Retry(ctx, 5*time.Second, Settling, func() error {
				err := createConfigMap(ctx, c, clusterNamespace, "bench")
				if apierrors.IsAlreadyExists(err) {
					return nil
				}
				return err
			})
			if err != nil {
				return fmt.Errorf("%s: configmap: %w", s.clusterName(i), err)
			}
			return nil
		})
	s.touched = touched
	rep.Add("logical_clusters", "logical clusters created", float64(res.Ops), bench.UnitCount)
	rep.AddRun("logical_cluster_create", "logical cluster creates", "namespace + configmap, "+clientsLabel(s.o.ClusterWorkers), res)
	if s.o.PID > 0 && res.Ops > 0 {
		after, err := s.rss(ctx, rep, "rss_after_clusters_mib", "server RSS after logical clusters", true)
		if err != nil {
			return errors.Join(res.Err(), err)
		}
		perKiB := float64(after-before) / 1024 / float64(res.Ops)
		rep.Add("rss_per_logical_cluster_kib", "server RSS growth per logical cluster", perKiB, bench.UnitKiB)
	}
	return res.Err()
}

// Cleanup deletes the benchmark namespaces (their configmaps first, in
// case no namespace controller runs) and the objects of the logical
// clusters. Errors are recorded in rep.
func (s *Suite) Cleanup(ctx context.Context, rep *bench.Report) {
	sel := metav1.ListOptions{LabelSelector: "app.kubernetes.io/created-by=meshplane-bench"}
	for _, ns := range s.namespaces {
		s.o.Logf("deleting namespace %s", ns)
		err := s.core.ConfigMaps(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, sel)
		if err != nil && !apierrors.IsNotFound(err) {
			rep.Error(fmt.Errorf("cleanup: delete configmaps in %s: %w", ns, err))
		}
		err = s.core.Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			rep.Error(fmt.Errorf("cleanup: delete namespace %s: %w", ns, err))
		}
	}
	s.namespaces = nil
	var idx []int
	for i, ok := range s.touched {
		if ok {
			idx = append(idx, i)
		}
	}
	s.touched = nil
	if len(idx) == 0 {
		return
	}
	s.o.Logf("deleting objects of %d logical clusters", len(idx))
	res := bench.Run(ctx, bench.RunOptions{Total: len(idx), Workers: s.o.ClusterWorkers, MaxErrors: 10},
		func(ctx context.Context, _, j int) error {
			i := idx[j]
			c, err := s.coreFor(s.clusterName(i))
			if err != nil {
				return err
			}
			err = c.ConfigMaps(clusterNamespace).Delete(ctx, "bench", metav1.DeleteOptions{})
			if err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("%s: %w", s.clusterName(i), err)
			}
			err = c.Namespaces().Delete(ctx, clusterNamespace, metav1.DeleteOptions{})
			if err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("%s: %w", s.clusterName(i), err)
			}
			return nil
		})
	if err := res.Err(); err != nil {
		rep.Error(fmt.Errorf("cleanup: logical clusters: %w", err))
	}
}
