package serviceaccounts

import (
	"strings"
	"testing"
	"time"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestDefaultServiceAccountAndRootCA checks that a new namespace of a new
// workspace gets the `default` ServiceAccount and the kube-root-ca.crt
// ConfigMap holding the core's CA, and that both come back when deleted.
func TestDefaultServiceAccountAndRootCA(t *testing.T) {
	s := server(t)
	ws := s.CreateOrg(t, "sa-defaults")
	k := s.KubectlFor(ws.Path)
	k.Run(t, "create", "namespace", "team")

	framework.Eventually(t, 30*time.Second, 250*time.Millisecond, "the default ServiceAccount in namespace team", func() (bool, string) {
		out, stderr, err := k.RunErr(t, "get", "serviceaccount", "default", "-n", "team", "-o", "name")
		return err == nil && strings.TrimSpace(out) == "serviceaccount/default", out + stderr
	})
	ca := serverCA(t, s)
	caOf := func() (bool, string) {
		out, stderr, err := k.RunErr(t, "get", "configmap", "kube-root-ca.crt", "-n", "team", "-o", `jsonpath={.data.ca\.crt}`)
		return err == nil && out == ca, out + stderr
	}
	framework.Eventually(t, 30*time.Second, 250*time.Millisecond, "kube-root-ca.crt in namespace team holding the core's CA", caOf)

	// Deleted or changed, they come back as they were.
	k.Run(t, "delete", "serviceaccount", "default", "-n", "team")
	framework.Eventually(t, 30*time.Second, 250*time.Millisecond, "the default ServiceAccount to be re-created", func() (bool, string) {
		out, stderr, err := k.RunErr(t, "get", "serviceaccount", "default", "-n", "team", "-o", "name")
		return err == nil, out + stderr
	})
	k.Run(t, "patch", "configmap", "kube-root-ca.crt", "-n", "team", "--type=merge", "-p", `{"data":{"ca.crt":"forged"}}`)
	framework.Eventually(t, 30*time.Second, 250*time.Millisecond, "kube-root-ca.crt to be restored after a change", caOf)

	// Every namespace, including default.
	framework.Eventually(t, 30*time.Second, 250*time.Millisecond, "the default ServiceAccount in every namespace", func() (bool, string) {
		out, stderr, err := k.RunErr(t, "get", "serviceaccounts", "-A", "-o", "jsonpath={range .items[*]}{.metadata.namespace}/{.metadata.name} {end}")
		return err == nil && strings.Contains(out, "team/default") && strings.Contains(out, "default/default"), out + stderr
	})
}
