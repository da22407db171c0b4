// Command meshplane-platform runs the whole Meshplane platform locally
// (`make run`): the core and every component, as one process tree.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/meshplane/meshplane/platform/launcher"
)

func main() {
	cfg, err := launcher.ParseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "meshplane-platform:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := launcher.Run(ctx, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "meshplane-platform:", err)
		os.Exit(1)
	}
}
