package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/meshplane/meshplane/platform/install"
)

// helmCommand runs install or uninstall: exit 0 on success, 1 when the
// cluster refused or a component did not become ready, 2 on bad arguments.
func helmCommand(name string, args []string) int {
	o := install.NewOptions(embeddedCharts)
	fs := flag.NewFlagSet("meshplane-platform "+name, flag.ContinueOnError)
	run := install.Install
	if name == "install" {
		o.AddInstallFlags(fs)
	} else {
		o.AddUninstallFlags(fs)
		run = install.Uninstall
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "meshplane-platform %s: unexpected arguments: %v\n", name, fs.Args())
		return 2
	}
	if err := o.Validate(); err != nil {
		fmt.Fprintf(os.Stderr, "meshplane-platform %s: %v\n", name, err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o); err != nil {
		fmt.Fprintf(os.Stderr, "meshplane-platform %s: %v\n", name, err)
		return 1
	}
	return 0
}
