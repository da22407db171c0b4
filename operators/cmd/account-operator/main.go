// Command account-operator reconciles core.platform-mesh.io Accounts in
// every workspace that binds the export: an organization's WorkspaceTypes,
// the Account's Workspace, its AccountInfo. It follows the export's
// APIExportEndpointSlice in the provider workspace (root:platform-mesh-system).
//
//	account-operator --kubeconfig admin.kubeconfig --context base
package main

import (
	"github.com/meshplane/meshplane/operators/accountoperator"
	"github.com/meshplane/meshplane/operators/command"
)

func main() {
	command.Main("account-operator", accountoperator.NewOptions(), accountoperator.Run)
}
