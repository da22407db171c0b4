package sharing

import (
	"testing"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

func testLifecycle(t *testing.T, sh *framework.Shards) {
	t.Skip("not yet")
}
