// Command meshplane-platform runs the whole Meshplane platform locally
// (`make run`): the core and every component, as one process tree.
// `meshplane-platform status [--root-directory DIR]` prints each
// component's pid, state and restart count. `meshplane-platform
// bootstrap`, `key-file` and `check` are the Helm charts' in-cluster
// helpers (bootstrap.go, keyfile.go, check.go: `helm test`);
// `meshplane-platform install` and `uninstall` put those charts into a
// Kubernetes cluster (helmcmd.go, package install).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/meshplane/meshplane/platform/launcher"
)

func main() {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "status":
			os.Exit(status(os.Args[2:]))
		case "bootstrap":
			os.Exit(bootstrapCmd(os.Args[2:]))
		case "key-file":
			os.Exit(keyFile(os.Args[2:]))
		case "install", "uninstall":
			os.Exit(helmCommand(os.Args[1], os.Args[2:]))
		case "check":
			os.Exit(checkCmd(os.Args[2:]))
		}
	}
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

// status prints the status file of a platform: exit 0 when the launcher
// and every component run, 1 when not, 2 on bad arguments.
func status(args []string) int {
	fs := flag.NewFlagSet("meshplane-platform status", flag.ContinueOnError)
	root := fs.String("root-directory", ".meshplane", "The platform's root directory.")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	err := launcher.PrintStatus(*root, os.Stdout)
	switch {
	case errors.Is(err, launcher.ErrNotRunning):
		return 1
	case err != nil:
		fmt.Fprintln(os.Stderr, "meshplane-platform status:", err)
		return 1
	}
	return 0
}
