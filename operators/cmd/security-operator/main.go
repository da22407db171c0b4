// Command security-operator turns Stores (core.platform-mesh.io/v1alpha1)
// into OpenFGA stores with their models and tuples, and is the initializer
// and terminator of the WorkspaceType root:security: organizations get
// their Store, accounts their owner and parent tuples, and deleted ones
// lose them. It follows the export's APIExportEndpointSlice in the
// provider workspace (root:platform-mesh-system).
//
//	security-operator --kubeconfig security-operator.kubeconfig --openfga-url http://127.0.0.1:8080
package main

import (
	"flag"
	"fmt"
	"os"

	"go.uber.org/zap/zapcore"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/meshplane/meshplane/operators/securityoperator"
)

func main() {
	o := securityoperator.NewOptions()
	fs := flag.NewFlagSet("security-operator", flag.ExitOnError)
	o.AddFlags(fs)
	// Errors are reported on the Stores' conditions; keep log lines
	// one-line (no stack traces) and structured.
	zopts := zap.Options{Development: false, StacktraceLevel: zapcore.DPanicLevel}
	zopts.BindFlags(fs)
	_ = fs.Parse(os.Args[1:])

	log := zap.New(zap.UseFlagOptions(&zopts))
	ctrl.SetLogger(log)
	klog.SetLogger(log)

	c, err := o.Complete()
	if err != nil {
		fmt.Fprintln(os.Stderr, "security-operator:", err)
		os.Exit(2)
	}
	// SIGTERM and SIGINT cancel the context: controllers drain, the manager
	// stops, and the process exits 0.
	ctx := ctrl.SetupSignalHandler()
	if err := securityoperator.Run(ctx, c, log.WithName("security-operator")); err != nil {
		log.Error(err, "security-operator failed")
		os.Exit(1)
	}
}
