// Command rebac-authz-webhook is the core's authorization webhook:
// SubjectAccessReviews on /authz answered by OpenFGA, as the model of
// apis/fga says (docs/rebac-authz-webhook.md).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/klog/v2"
	"k8s.io/klog/v2/textlogger"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/meshplane/meshplane/webhook/internal/server"
)

func main() {
	fs := flag.NewFlagSet("rebac-authz-webhook", flag.ExitOnError)
	o := server.NewOptions()
	o.AddFlags(fs)
	logConfig := textlogger.NewConfig()
	logConfig.AddFlags(fs)
	_ = fs.Parse(os.Args[1:])
	log := textlogger.NewLogger(logConfig)
	klog.SetLogger(log)
	ctrllog.SetLogger(log)

	c, err := o.Complete()
	if err != nil {
		fmt.Fprintln(os.Stderr, "rebac-authz-webhook: invalid flags:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := server.Run(ctx, c, log); err != nil {
		fmt.Fprintln(os.Stderr, "rebac-authz-webhook:", err)
		os.Exit(1)
	}
}
