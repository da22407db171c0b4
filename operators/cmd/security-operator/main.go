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
	"github.com/meshplane/meshplane/operators/command"
	"github.com/meshplane/meshplane/operators/securityoperator"
)

func main() {
	command.Main("security-operator", securityoperator.NewOptions(), securityoperator.Run)
}
