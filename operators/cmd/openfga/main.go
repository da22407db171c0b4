// Command openfga is OpenFGA's own server (`run`, `migrate`, `version`,
// `validate-models`), compiled from github.com/openfga/openfga at the
// version pinned in this module, so the platform runs the same OpenFGA its
// operators and webhook are tested against without a separate download.
// Flags, environment variables (OPENFGA_*) and config files are OpenFGA's,
// plus OPENFGA_AUTHN_PRESHARED_KEYS_FILE (see presharedKeysFromFile); its
// type-system and model caches default to DefaultCacheSize entries.
package main

import (
	"fmt"
	"os"

	"github.com/openfga/openfga/cmd"
	"github.com/openfga/openfga/cmd/migrate"
	"github.com/openfga/openfga/cmd/run"
	"github.com/openfga/openfga/cmd/validatemodels"
)

func main() {
	if err := boundCaches(); err != nil {
		fmt.Fprintln(os.Stderr, "openfga:", err)
		os.Exit(1)
	}
	if err := presharedKeysFromFile(); err != nil {
		fmt.Fprintln(os.Stderr, "openfga:", err)
		os.Exit(1)
	}
	root := cmd.NewRootCommand()
	root.AddCommand(run.NewRunCommand(), migrate.NewMigrateCommand(), validatemodels.NewValidateCommand(), cmd.NewVersionCommand())
	if err := root.Execute(); err != nil {
		os.Exit(1)
	}
}
