package app

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/meshplane/meshplane/bench/pkg/bench"
	"github.com/meshplane/meshplane/bench/pkg/bench/kcpbench"
)

type options struct {
	kubeconfig  string
	context     string
	cluster     string
	namespace   string
	clusterPath string

	creates, workers  int
	gets              int
	listSize, lists   int
	protobuf          bool
	clusters, cWorker int

	workspaces, wsTree, wsFanout, wsWorkers int
	workspaces10k                           bool

	bindings                                int
	vwLists, vwListObjects, vwListConsumers int
	vwLarge                                 bool
	vwWatchEvents, vwWatchConsumers         int
	vwWatchRate                             float64

	pid int

	accountOrgs, accounts, accountWorkers int
	operatorPID, platformCorePID          int

	etcdEndpoint                   string
	etcdEmbedded                   bool
	etcdPuts                       int
	etcdCACert, etcdCert, etcdKey  string
	startCmd, readyURL, serverLog  string
	readyTimeout, stopTimeout      time.Duration
	timeout, phaseTimeout, reqTime time.Duration
	settle                         time.Duration

	keep     bool
	jsonPath string
}

func newFlagSet(o *options) *flag.FlagSet {
	fs := flag.NewFlagSet("meshplane-bench", flag.ContinueOnError)
	// The flag package's own error and usage output is suppressed; run
	// prints the error with a hint, and the usage only for -h/--help.
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	fs.StringVar(&o.kubeconfig, "kubeconfig", os.Getenv("KUBECONFIG"), "admin kubeconfig (default $KUBECONFIG); with --start-cmd it is read once the server is ready")
	fs.StringVar(&o.context, "context", "", `kubeconfig context (default "base" if present, else the current context); any /clusters/<name> suffix of its server URL is stripped`)
	fs.StringVar(&o.cluster, "cluster", "", "logical cluster for the configmap phases, served at <server>/clusters/<name> (default bench-<random>; Meshplane creates it implicitly)")
	fs.StringVar(&o.namespace, "namespace", "", "namespace of the 1-client creates, the GETs and the LISTs (default bench-<random>); with --keep a later run reuses its configmaps, e.g. to repeat LISTs without filling again")
	fs.StringVar(&o.clusterPath, "cluster-path", "", "existing logical cluster or workspace path (e.g. root) to use instead of --cluster; needed for kcp")
	fs.IntVar(&o.creates, "creates", 2000, "configmaps created per create run (one run with 1 client, one with --workers clients); 0 skips")
	fs.IntVar(&o.workers, "workers", 8, "concurrent clients of the multi-client create run (and of the etcd put run and the widget creates)")
	fs.IntVar(&o.gets, "gets", 2000, "sequential GETs of one configmap; 0 skips")
	fs.IntVar(&o.listSize, "list-size", 2000, "configmaps in the listed namespace (missing ones are created)")
	fs.IntVar(&o.lists, "lists", 20, "LISTs of the namespace; 0 skips")
	fs.BoolVar(&o.protobuf, "protobuf", true, "also LIST the configmaps with protobuf (application/vnd.kubernetes.protobuf), alternating with the JSON LISTs")
	fs.IntVar(&o.clusters, "clusters", 1000, "logical clusters bench-lc-<i> to create (namespace bench + 1 configmap each); 0 skips")
	fs.IntVar(&o.cWorker, "cluster-workers", 8, "concurrent clients of the logical cluster phase")
	fs.IntVar(&o.workspaces, "workspaces", 1000, "kcp Workspaces per flat run in a new organization root:bench-ws-<random> (one run with 1 client, one with --workspace-workers clients, measuring RSS growth per workspace with --pid); 0 skips")
	fs.IntVar(&o.wsTree, "workspace-tree", -1, "Workspaces created as a tree (then deleted, timed); -1: --workspaces; 0 skips")
	fs.IntVar(&o.wsFanout, "workspace-fanout", 10, "children per workspace in the tree")
	fs.IntVar(&o.wsWorkers, "workspace-workers", 16, "concurrent clients of the multi-client workspace runs and of the APIBinding creates")
	fs.BoolVar(&o.workspaces10k, "workspaces-10k", false, "also create 10,000 flat Workspaces with --workspace-workers clients and sample RSS afterwards")
	fs.IntVar(&o.bindings, "bindings", 20, "consumer workspaces (in a new organization root:bench-api-<random>) binding the benchmark APIExport, timed until all are Bound; 0 skips this phase")
	fs.IntVar(&o.vwLists, "vw-lists", 50, "wildcard LISTs through the APIExport virtual workspace over --vw-list-objects widgets; 0 skips")
	fs.IntVar(&o.vwListObjects, "vw-list-objects", 100, "widgets listed by --vw-lists, spread over --vw-list-consumers consumers")
	fs.IntVar(&o.vwListConsumers, "vw-list-consumers", 20, "consumers holding the --vw-list-objects widgets")
	fs.BoolVar(&o.vwLarge, "vw-large", true, "also LIST 10,000 widgets in 100 consumers 10 times through the virtual workspace")
	fs.IntVar(&o.vwWatchEvents, "vw-watch-events", 200, "widgets created while a wildcard watch through the virtual workspace measures the event latency; 0 skips")
	fs.IntVar(&o.vwWatchConsumers, "vw-watch-consumers", 100, "bound consumers the --vw-watch-events widgets are spread over")
	fs.Float64Var(&o.vwWatchRate, "vw-watch-rate", 50, "widget creates per second during the watch latency phase")
	fs.IntVar(&o.accountOrgs, "account-orgs", 0, "org Accounts to create in root:orgs of a running platform (make run; --kubeconfig is its admin kubeconfig), timed until all are Ready; 0 skips the accounts phase")
	fs.IntVar(&o.accounts, "accounts", 1000, "accounts created after the org Accounts, spread over them, timed until all are Ready")
	fs.IntVar(&o.accountWorkers, "account-workers", 16, "concurrent clients creating Accounts")
	fs.IntVar(&o.operatorPID, "account-operator-pid", 0, "account-operator process to sample VmRSS of during the accounts phase")
	fs.IntVar(&o.platformCorePID, "platform-core-pid", 0, "core process of the platform to sample VmRSS of during the accounts phase")
	fs.IntVar(&o.pid, "pid", 0, "server process id to sample VmRSS of (idle, after load); implied by --start-cmd")
	fs.StringVar(&o.etcdEndpoint, "etcd-endpoint", "", "etcd endpoint URL(s), comma-separated, for the raw put ceiling")
	fs.BoolVar(&o.etcdEmbedded, "etcd-embedded", false, "measure the raw put ceiling against a throw-away embedded etcd (temp dir, free 127.0.0.1 ports)")
	fs.IntVar(&o.etcdPuts, "etcd-puts", 0, "puts per etcd run (default: --creates, or 2000 if that is 0)")
	fs.StringVar(&o.etcdCACert, "etcd-cacert", "", "CA bundle for --etcd-endpoint")
	fs.StringVar(&o.etcdCert, "etcd-cert", "", "client certificate for --etcd-endpoint")
	fs.StringVar(&o.etcdKey, "etcd-key", "", "client key for --etcd-endpoint")
	fs.StringVar(&o.startCmd, "start-cmd", "", "server command to start (run via /bin/sh -c 'exec CMD'); stopped with SIGTERM at the end")
	fs.StringVar(&o.readyURL, "ready-url", "", "readiness URL polled every 20ms (TLS not verified); required with --start-cmd")
	fs.StringVar(&o.serverLog, "server-log", "", "file for the started server's output (default: a temp file, removed on success)")
	fs.DurationVar(&o.readyTimeout, "ready-timeout", 3*time.Minute, "maximum time for the started server to become ready")
	fs.DurationVar(&o.stopTimeout, "stop-timeout", 30*time.Second, "time the started server gets to exit after SIGTERM before SIGKILL")
	fs.DurationVar(&o.timeout, "timeout", time.Hour, "overall time limit of the measurements")
	fs.DurationVar(&o.phaseTimeout, "phase-timeout", 15*time.Minute, "time limit of each phase")
	fs.DurationVar(&o.reqTime, "request-timeout", 30*time.Second, "time limit of each API request")
	fs.DurationVar(&o.settle, "settle", 2*time.Second, "pause before each RSS sample")
	fs.BoolVar(&o.keep, "keep", false, "keep the created namespaces, objects and workspaces")
	fs.StringVar(&o.jsonPath, "json", "", `also write the results as JSON to this file ("-": JSON on stdout, table on stderr)`)
	return fs
}

func printUsage(fs *flag.FlagSet, w io.Writer) {
	fmt.Fprint(w, `Usage: meshplane-bench --kubeconfig FILE [flags]

Benchmarks a kcp-compatible Kubernetes API server (Meshplane or kcp) and
prints a Markdown table (figure | value). Progress goes to stderr. Exit status
is 0 on success, 1 if any phase failed, 2 on bad flags.

Flags:
`)
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
}

func parseFlags(args []string, stderr io.Writer) (*options, error) {
	o := &options{}
	fs := newFlagSet(o)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printUsage(fs, stderr)
		}
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	if err := o.validate(); err != nil {
		return nil, err
	}
	return o, nil
}

func (o *options) kubeEnabled() bool {
	return o.creates > 0 || o.gets > 0 || o.lists > 0 || o.clusters > 0 || o.pid > 0 || o.startCmd != "" || o.kcpOptions().WorkspacesEnabled() || o.kcpOptions().SharingEnabled()
}

// Sizes of the --workspaces-10k and --vw-large phases.
const (
	largeWorkspaces  = 10_000
	largeVWObjects   = 10_000
	largeVWConsumers = 100
	largeVWLists     = 10
)

// kcpOptions maps the workspace and API sharing flags to the suite's
// options (without the runtime fields).
func (o *options) kcpOptions() kcpbench.Options {
	k := kcpbench.Options{
		Workspaces:     o.workspaces,
		TreeSize:       o.wsTree,
		TreeFanout:     o.wsFanout,
		Workers:        o.wsWorkers,
		Bindings:       o.bindings,
		ListConsumers:  o.vwListConsumers,
		ListObjects:    o.vwListObjects,
		Lists:          o.vwLists,
		WatchConsumers: o.vwWatchConsumers,
		WatchEvents:    o.vwWatchEvents,
		WatchRate:      o.vwWatchRate,
		ObjectWorkers:  o.workers,
	}
	if k.TreeSize < 0 {
		k.TreeSize = o.workspaces
	}
	if o.workspaces10k {
		k.Large = largeWorkspaces
	}
	if o.vwLarge {
		k.LargeObjects, k.LargeConsumers, k.LargeLists = largeVWObjects, largeVWConsumers, largeVWLists
	}
	return k
}

func (o *options) validate() error {
	for _, c := range []struct {
		name string
		v    int
	}{{"--creates", o.creates}, {"--gets", o.gets}, {"--list-size", o.listSize}, {"--lists", o.lists}, {"--clusters", o.clusters}, {"--etcd-puts", o.etcdPuts}, {"--pid", o.pid},
		{"--workspaces", o.workspaces}, {"--bindings", o.bindings},
		{"--account-orgs", o.accountOrgs}, {"--accounts", o.accounts}, {"--account-operator-pid", o.operatorPID}, {"--platform-core-pid", o.platformCorePID}, {"--vw-lists", o.vwLists}, {"--vw-list-objects", o.vwListObjects}, {"--vw-watch-events", o.vwWatchEvents}} {
		if c.v < 0 {
			return fmt.Errorf("%s must not be negative, got %d", c.name, c.v)
		}
	}
	if o.workers < 1 || o.workers > 1024 {
		return fmt.Errorf("--workers must be in [1, 1024], got %d", o.workers)
	}
	if o.cWorker < 1 || o.cWorker > 1024 {
		return fmt.Errorf("--cluster-workers must be in [1, 1024], got %d", o.cWorker)
	}
	if o.accountWorkers < 1 || o.accountWorkers > 1024 {
		return fmt.Errorf("--account-workers must be in [1, 1024], got %d", o.accountWorkers)
	}
	if o.accountOrgs > 0 && o.startCmd != "" {
		return errors.New("--account-orgs measures a running platform: it does not go with --start-cmd")
	}
	if o.wsWorkers < 1 || o.wsWorkers > 1024 {
		return fmt.Errorf("--workspace-workers must be in [1, 1024], got %d", o.wsWorkers)
	}
	if o.wsTree < -1 {
		return fmt.Errorf("--workspace-tree must be -1 (same as --workspaces) or at least 0, got %d", o.wsTree)
	}
	if o.wsFanout < 1 || o.wsFanout > 1000 {
		return fmt.Errorf("--workspace-fanout must be in [1, 1000], got %d", o.wsFanout)
	}
	if o.vwListObjects > 0 && o.vwLists > 0 && (o.vwListConsumers < 1 || o.vwListConsumers > 10_000) {
		return fmt.Errorf("--vw-list-consumers must be in [1, 10000], got %d", o.vwListConsumers)
	}
	if o.vwWatchEvents > 0 && (o.vwWatchConsumers < 1 || o.vwWatchConsumers > 10_000) {
		return fmt.Errorf("--vw-watch-consumers must be in [1, 10000], got %d", o.vwWatchConsumers)
	}
	if !(o.vwWatchRate > 0 && o.vwWatchRate <= 10_000) {
		return fmt.Errorf("--vw-watch-rate must be in (0, 10000], got %g", o.vwWatchRate)
	}
	const maxCount = 10_000_000
	if o.creates > maxCount || o.gets > maxCount || o.listSize > maxCount || o.lists > maxCount || o.clusters > maxCount || o.etcdPuts > maxCount ||
		o.workspaces > maxCount || o.wsTree > maxCount || o.bindings > maxCount || o.vwLists > maxCount || o.vwListObjects > maxCount || o.vwWatchEvents > maxCount {
		return fmt.Errorf("counts are limited to %d", maxCount)
	}
	if o.lists > 0 && o.listSize < 1 {
		return errors.New("--list-size must be positive when --lists > 0")
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"--ready-timeout", o.readyTimeout}, {"--stop-timeout", o.stopTimeout}, {"--timeout", o.timeout}, {"--phase-timeout", o.phaseTimeout}, {"--request-timeout", o.reqTime}} {
		if d.v <= 0 {
			return fmt.Errorf("%s must be positive, got %s", d.name, d.v)
		}
	}
	if o.settle < 0 {
		return fmt.Errorf("--settle must not be negative, got %s", o.settle)
	}
	if o.cluster != "" && o.clusterPath != "" {
		return errors.New("--cluster and --cluster-path are mutually exclusive")
	}
	for _, c := range []string{o.cluster, o.clusterPath} {
		if c != "" {
			if err := bench.ValidateClusterName(c); err != nil {
				return err
			}
		}
	}
	if o.etcdEndpoint != "" && o.etcdEmbedded {
		return errors.New("--etcd-endpoint and --etcd-embedded are mutually exclusive")
	}
	if o.etcdEndpoint == "" && (o.etcdCACert != "" || o.etcdCert != "" || o.etcdKey != "") {
		return errors.New("--etcd-cacert/--etcd-cert/--etcd-key need --etcd-endpoint")
	}
	if (o.etcdCert == "") != (o.etcdKey == "") {
		return errors.New("--etcd-cert and --etcd-key go together")
	}
	for _, ep := range splitList(o.etcdEndpoint) {
		if err := checkURL("--etcd-endpoint", ep); err != nil {
			return err
		}
	}
	if o.startCmd != "" {
		if o.pid != 0 {
			return errors.New("--pid and --start-cmd are mutually exclusive (the started process is measured)")
		}
		if o.readyURL == "" {
			return errors.New("--start-cmd needs --ready-url")
		}
		if err := checkURL("--ready-url", o.readyURL); err != nil {
			return err
		}
	} else if o.readyURL != "" || o.serverLog != "" {
		return errors.New("--ready-url and --server-log need --start-cmd")
	}
	if o.pid > 0 {
		if _, err := bench.ReadRSS(o.pid); err != nil {
			return fmt.Errorf("--pid %d: %w", o.pid, err)
		}
	}
	if (o.kubeEnabled() || o.accountOrgs > 0) && o.kubeconfig == "" {
		return errors.New("--kubeconfig is required (or set $KUBECONFIG)")
	}
	if !o.kubeEnabled() && o.accountOrgs == 0 && o.etcdEndpoint == "" && !o.etcdEmbedded {
		return errors.New("nothing to measure")
	}
	return nil
}

func checkURL(flagName, s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%s: %q is not an http(s) URL", flagName, s)
	}
	return nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
