// Command account-operator reconciles core.platform-mesh.io Accounts in
// every workspace that binds the export: an organization's WorkspaceTypes,
// the Account's Workspace, its AccountInfo. It follows the export's
// APIExportEndpointSlice in the provider workspace (root:platform-mesh-system).
//
//	account-operator --kubeconfig admin.kubeconfig --context base
package main

import (
	"flag"
	"fmt"
	"os"

	"go.uber.org/zap/zapcore"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/meshplane/meshplane/operators/accountoperator"
)

func main() {
	o := accountoperator.NewOptions()
	fs := flag.NewFlagSet("account-operator", flag.ExitOnError)
	o.AddFlags(fs)
	// Errors are reported on the Accounts' conditions; keep log lines
	// one-line (no stack traces) and structured.
	zopts := zap.Options{Development: false, StacktraceLevel: zapcore.DPanicLevel}
	zopts.BindFlags(fs)
	_ = fs.Parse(os.Args[1:])

	log := zap.New(zap.UseFlagOptions(&zopts))
	ctrl.SetLogger(log)
	klog.SetLogger(log)

	c, err := o.Complete()
	if err != nil {
		fmt.Fprintln(os.Stderr, "account-operator:", err)
		os.Exit(2)
	}
	// SIGTERM and SIGINT cancel the context: controllers drain, the manager
	// stops, and the process exits 0.
	ctx := ctrl.SetupSignalHandler()
	if err := accountoperator.Run(ctx, c, log.WithName("account-operator")); err != nil {
		log.Error(err, "account-operator failed")
		os.Exit(1)
	}
}
