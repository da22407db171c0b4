// Command kubectl-ws is the "kubectl ws" plugin: it shows, enters, lists and
// creates workspaces of a kcp-compatible server (such as Meshplane) by editing
// the kubeconfig the same way kcp's plugin does.
//
//	go install github.com/meshplane/meshplane/core/cmd/kubectl-ws
package main

import (
	"os"

	"github.com/meshplane/meshplane/core/pkg/cli/workspace"
)

func main() {
	if err := workspace.NewCommand().Execute(); err != nil {
		os.Exit(1)
	}
}
