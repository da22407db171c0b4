// Package e2e runs the MongoDB example provider against a real core, with
// other workspaces playing the consumers and the downstream cluster: the
// README's walk-through, and the provider process through status, the
// permission claim on secrets, restarts and bindings coming and going.
package e2e

import (
	"os"
	"testing"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

func TestMain(m *testing.M) { os.Exit(framework.RunMain(m)) }
