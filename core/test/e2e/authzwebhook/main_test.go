// Package authzwebhook tests the core's authorization webhook
// (--authorization-webhook-config-file) against a real HTTPS webhook the
// tests start: its answers count after RBAC, the review carries the
// logical cluster, and when the webhook fails RBAC still decides and
// nothing else is allowed.
package authzwebhook

import (
	"fmt"
	"os"
	"testing"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// hook is the package's webhook, registered with the shared server.
var hook *webhook

func TestMain(m *testing.M) {
	if framework.ExternalMode() {
		// The webhook must be registered when the core starts.
		fmt.Fprintln(os.Stderr, "authzwebhook: skipped in external mode (the tests register their own webhook)")
		os.Exit(0)
	}
	dir, err := os.MkdirTemp("", "authzwebhook-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	hook, err = newWebhook(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting the test webhook:", err)
		os.Exit(1)
	}
	code := framework.RunMain(m, framework.WithExtraArgs(
		"--authorization-webhook-config-file="+hook.kubeconfigPath(),
		"--authorization-webhook-version=v1",
		"--authorization-webhook-rules-path=/rules",
		// No caching: each request asks the webhook, so a test sees its
		// new answers at once.
		"--authorization-webhook-cache-authorized-ttl=0s",
		"--authorization-webhook-cache-unauthorized-ttl=0s",
	))
	hook.stop()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}
