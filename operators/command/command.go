// Package command is the main function the operators share: flags (the
// operator's own and zap's), one-line structured logs for controller-runtime
// and klog, a context that SIGTERM and SIGINT cancel, and exit codes (2 for
// bad flags, 1 when the operator fails, 0 after a clean stop).
package command

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"net/http/pprof"
	"os"

	"github.com/go-logr/logr"
	"go.uber.org/zap/zapcore"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// Options are an operator's flags, completed into its configuration C.
type Options[C any] interface {
	AddFlags(fs *flag.FlagSet)
	Complete() (C, error)
}

// Main parses os.Args into o, runs run until a signal stops it and exits.
func Main[C any](name string, o Options[C], run func(context.Context, C, logr.Logger) error) {
	fs := flag.NewFlagSet(name, flag.ExitOnError)
	o.AddFlags(fs)
	// Errors are reported on the objects' conditions; keep log lines
	// one-line (no stack traces) and structured.
	zopts := zap.Options{Development: false, StacktraceLevel: zapcore.DPanicLevel}
	zopts.BindFlags(fs)
	_ = fs.Parse(os.Args[1:])

	log := zap.New(zap.UseFlagOptions(&zopts))
	ctrl.SetLogger(log)
	klog.SetLogger(log)

	c, err := o.Complete()
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		os.Exit(2)
	}
	// SIGTERM and SIGINT cancel the context: controllers drain, the manager
	// stops, and the process exits 0.
	if err := run(ctrl.SetupSignalHandler(), c, log.WithName(name)); err != nil {
		log.Error(err, name+" failed")
		os.Exit(1)
	}
}

// ProfilingHandlers are Go's pprof endpoints under /debug/pprof/, for an
// operator's metrics server (its --profiling flag).
func ProfilingHandlers() map[string]http.Handler {
	return map[string]http.Handler{
		"/debug/pprof/":        http.HandlerFunc(pprof.Index),
		"/debug/pprof/cmdline": http.HandlerFunc(pprof.Cmdline),
		"/debug/pprof/profile": http.HandlerFunc(pprof.Profile),
		"/debug/pprof/symbol":  http.HandlerFunc(pprof.Symbol),
		"/debug/pprof/trace":   http.HandlerFunc(pprof.Trace),
	}
}
