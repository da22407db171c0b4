// Command meshplane runs the Meshplane core server.
package main

import (
	"os"

	"k8s.io/component-base/cli"

	"github.com/meshplane/meshplane/core/pkg/cmd"
)

func main() {
	// server.NewConfig turns client-go's WatchListClient off (see
	// pkg/server/env.go): the watch cache depends on it.
	os.Exit(cli.Run(cmd.NewRoot()))
}
