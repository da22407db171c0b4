// Command meshplane runs the Meshplane core server.
package main

import (
	"os"

	"k8s.io/component-base/cli"

	"github.com/meshplane/meshplane/core/pkg/cmd"
)

func main() {
	os.Exit(cli.Run(cmd.NewRoot()))
}
