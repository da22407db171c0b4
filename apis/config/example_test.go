package config_test

import (
	"fmt"

	"github.com/meshplane/meshplane/apis/config"
)

// The embedded manifests come back as unstructured objects that any client
// (controller-runtime, the dynamic client) can create as they are.
func ExampleCRDs() {
	crds, err := config.CRDs()
	if err != nil {
		panic(err)
	}
	for _, crd := range crds {
		fmt.Println(crd.GetName())
	}
	export, err := config.APIExport()
	if err != nil {
		panic(err)
	}
	fmt.Println(export.GetKind(), export.GetName())
	// Output:
	// accountinfos.core.platform-mesh.io
	// accounts.core.platform-mesh.io
	// authorizationmodels.core.platform-mesh.io
	// invites.core.platform-mesh.io
	// roleassignments.core.platform-mesh.io
	// stores.core.platform-mesh.io
	// APIExport core.platform-mesh.io
}
