// Package app is meshplane-bench: options (flags, validation) in
// options.go, the run orchestration in run.go, and the started server in
// server.go. See the command's documentation for what it measures.
package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"

	"github.com/meshplane/meshplane/bench/pkg/bench"
	"github.com/meshplane/meshplane/bench/pkg/bench/accountbench"
	"github.com/meshplane/meshplane/bench/pkg/bench/etcdbench"
	"github.com/meshplane/meshplane/bench/pkg/bench/kcpbench"
	"github.com/meshplane/meshplane/bench/pkg/bench/kubebench"
)

// Run runs meshplane-bench with the command-line arguments args (without
// the program name) and returns its exit status: 0 on success, 1 if any
// phase failed, 2 on bad flags.
func Run(args []string, stdout, stderr io.Writer) int {
	o, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "meshplane-bench: %v\nRun 'meshplane-bench -h' for usage.\n", err)
		return 2
	}

	logf := func(format string, args ...any) {
		fmt.Fprintf(stderr, "[%s] "+format+"\n", append([]any{time.Now().Format("15:04:05.000")}, args...)...)
	}
	sigCtx, stopSignals := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stopSignals()
	// After the first signal, a second one terminates the benchmark at once.
	context.AfterFunc(sigCtx, stopSignals)
	ctx, cancel := context.WithTimeout(sigCtx, o.timeout)
	defer cancel()

	rep := bench.NewReport()
	rep.Info("host", "benchmark host", fmt.Sprintf("%s/%s, %d CPUs, %s", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version()))

	pid := o.pid
	var srv *server
	if o.startCmd != "" {
		srv, err = startServer(ctx, o, rep, logf)
		if err != nil {
			rep.Error(err)
			return finish(o, rep, stdout, stderr)
		}
		pid = srv.PID()
	}
	stopServer := func() {
		if srv != nil {
			srv.stop(o, rep, logf)
			srv = nil
		}
	}
	defer stopServer()

	if o.kubeEnabled() && ctx.Err() == nil {
		runKube(ctx, o, pid, rep, logf)
	}
	if o.accountOrgs > 0 && ctx.Err() == nil {
		runAccounts(ctx, o, rep, logf)
	}
	// The server is idle from here on; stop it so that it does not compete
	// with the etcd ceiling for CPU.
	stopServer()

	if (o.etcdEmbedded || o.etcdEndpoint != "") && ctx.Err() == nil {
		if err := runEtcd(ctx, o, rep, logf); err != nil {
			rep.Error(fmt.Errorf("etcd: %w", err))
		}
	}
	if err := ctx.Err(); err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			rep.Error(fmt.Errorf("benchmark stopped by --timeout %s", o.timeout))
		} else {
			rep.Error(errors.New("benchmark interrupted by signal"))
		}
	}
	return finish(o, rep, stdout, stderr)
}

func runKube(ctx context.Context, o *options, pid int, rep *bench.Report, logf func(string, ...any)) {
	target, err := kubebench.LoadTarget(o.kubeconfig, o.context, o.reqTime)
	if err != nil {
		rep.Error(err)
		return
	}
	cluster := o.clusterPath
	if cluster == "" {
		cluster = o.cluster
	}
	if cluster == "" {
		cluster = "bench-" + bench.RandomSuffix(8)
	}
	namespace := o.namespace
	if namespace == "" {
		namespace = "bench-" + bench.RandomSuffix(8)
	}
	suite, err := kubebench.NewSuite(target, kubebench.Options{
		Cluster:        cluster,
		Namespace:      namespace,
		Creates:        o.creates,
		Workers:        o.workers,
		Gets:           o.gets,
		ListSize:       o.listSize,
		Lists:          o.lists,
		Protobuf:       o.protobuf,
		Clusters:       o.clusters,
		ClusterWorkers: o.cWorker,
		ClusterPrefix:  "bench-lc-",
		PID:            pid,
		Settle:         o.settle,
		PhaseTimeout:   o.phaseTimeout,
		Logf:           logf,
	})
	if err != nil {
		rep.Error(err)
		return
	}
	_ = suite.Run(ctx, rep) // phase errors are recorded in rep
	if !o.keep {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Minute)
		suite.Cleanup(cctx, rep)
		cancel()
	}

	ko := o.kcpOptions()
	if (ko.WorkspacesEnabled() || ko.SharingEnabled()) && ctx.Err() == nil {
		ko.PID, ko.Settle, ko.PhaseTimeout, ko.Logf = pid, o.settle, o.phaseTimeout, logf
		ks, err := kcpbench.NewSuite(target, ko)
		if err != nil {
			rep.Error(err)
			return
		}
		_ = ks.Run(ctx, rep) // phase errors are recorded in rep
		if !o.keep {
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Minute)
			ks.Cleanup(cctx, rep)
			cancel()
		}
	}
	if o.keep {
		logf("--keep: leaving the benchmark objects in place")
	}
}

func runAccounts(ctx context.Context, o *options, rep *bench.Report, logf func(string, ...any)) {
	target, err := kubebench.LoadTarget(o.kubeconfig, o.context, o.reqTime)
	if err != nil {
		rep.Error(err)
		return
	}
	err = accountbench.Run(ctx, target, accountbench.Options{
		Orgs: o.accountOrgs, Accounts: o.accounts, Workers: o.accountWorkers,
		OperatorPID: o.operatorPID, CorePID: o.platformCorePID,
		OrgsPath: "root:orgs", ProviderPath: "root:platform-mesh-system", Export: "core.platform-mesh.io",
		PhaseTimeout: o.phaseTimeout, Settle: o.settle, Logf: logf,
	}, rep)
	if err != nil {
		rep.Error(fmt.Errorf("accounts: %w", err))
	}
}

func runEtcd(ctx context.Context, o *options, rep *bench.Report, logf func(string, ...any)) error {
	puts := o.etcdPuts
	if puts == 0 {
		puts = o.creates
	}
	if puts == 0 {
		puts = 2000
	}
	eo := etcdbench.Options{
		Puts:      puts,
		Workers:   o.workers,
		ValueSize: kubebench.ConfigMapJSONSize(),
		Timeout:   o.phaseTimeout,
		Logf:      logf,
	}
	label := "etcd"
	if o.etcdEmbedded {
		logf("starting embedded etcd")
		e, err := etcdbench.StartEmbedded(ctx)
		if err != nil {
			return err
		}
		defer func() {
			if err := e.Close(); err != nil {
				rep.Error(fmt.Errorf("embedded etcd cleanup: %w", err))
			}
		}()
		eo.Endpoints = []string{e.Endpoint}
		label = "embedded etcd"
	} else {
		eo.Endpoints = splitList(o.etcdEndpoint)
		eo.TLS = transport.TLSInfo{TrustedCAFile: o.etcdCACert, CertFile: o.etcdCert, KeyFile: o.etcdKey}
	}
	return etcdbench.Puts(ctx, eo, rep, label)
}

func finish(o *options, rep *bench.Report, stdout, stderr io.Writer) int {
	rep.Finished = time.Now().UTC()
	table := stdout
	if o.jsonPath == "-" {
		table = stderr
		if err := rep.WriteJSON(stdout); err != nil {
			fmt.Fprintf(stderr, "meshplane-bench: write JSON: %v\n", err)
			return 1
		}
	} else if o.jsonPath != "" {
		f, err := os.Create(o.jsonPath)
		if err == nil {
			err = rep.WriteJSON(f)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			rep.Error(fmt.Errorf("write JSON %s: %w", o.jsonPath, err))
		}
	}
	if err := rep.WriteMarkdown(table); err != nil {
		fmt.Fprintf(stderr, "meshplane-bench: write table: %v\n", err)
		return 1
	}
	if rep.HasErrors() {
		return 1
	}
	return 0
}
