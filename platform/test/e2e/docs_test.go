package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var shBlock = regexp.MustCompile("(?s)```sh\n(.*?)```")

// docCommands returns the ```sh blocks of a doc, leaving out those that
// start the platform (the test has started it) or assume the default ports.
func docCommands(t *testing.T, doc string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", doc))
	if err != nil {
		t.Fatal(err)
	}
	var keep []string
	for _, m := range shBlock.FindAllStringSubmatch(string(data), -1) {
		b := m[1]
		if strings.Contains(b, "make run") || strings.Contains(b, "curl ") || strings.Contains(b, "bin/account-operator") {
			continue
		}
		keep = append(keep, b)
	}
	return strings.Join(keep, "\n")
}

// TestDocsWalkThrough runs the commands of docs/accounts.md and
// docs/providers.md, as pasted by a user in the directory `make run` was
// started in, against a platform the launcher runs.
func TestDocsWalkThrough(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, ".meshplane")
	if err := os.Mkdir(filepath.Join(dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(binDir, "provider-kubeconfig"), filepath.Join(dir, "bin", "provider-kubeconfig")); err != nil {
		t.Fatal(err)
	}
	p := startPlatform(t, root, freeBase(t))
	p.waitReady(t)

	run := func(doc string) string {
		t.Helper()
		cmd := exec.Command("bash", "-x", "-c", docCommands(t, doc))
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "KUBECONFIG=")
		out, err := cmd.CombinedOutput()
		t.Logf("%s:\n%s", doc, out)
		if err != nil {
			t.Fatalf("the commands of %s failed: %v", doc, err)
		}
		return string(out)
	}
	out := run("accounts.md")
	for _, want := range []string{
		"account.core.platform-mesh.io/acme condition met",
		"acme   org    Acme Inc.      True",
		"acme-org            Ready",
		`User "bob" cannot list resource "accounts"`,
		"account.core.platform-mesh.io/team-a condition met",
		"acme acme root:orgs:acme:team-a",
		`account.core.platform-mesh.io "acme" deleted`,
		// The operator runs with its scoped ServiceAccount credential.
		"system:serviceaccount:default:account-operator",
		"apiexports/content",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("docs/accounts.md: the output lacks %q", want)
		}
	}
	if _, after, _ := strings.Cut(out, `"acme" deleted`); !strings.Contains(after, "No resources found") {
		t.Errorf("docs/accounts.md: after deleting acme, root:orgs still holds workspaces or types")
	}

	// docs/providers.md lists the Accounts of every consumer.
	cmd := exec.Command("kubectl", "--kubeconfig", filepath.Join(root, "admin.kubeconfig"), "--context", "alice", "create", "-f", filepath.Join("testdata", "org-account.yaml"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("creating acme again: %v\n%s", err, out)
	}
	out = run("providers.md")
	if n := strings.Count(out, "\nacme   org    Acme Inc."); n != 3 {
		t.Errorf("docs/providers.md: want acme listed three times (admin's, the ServiceAccount's and bob's provider kubeconfig), got %d times", n)
	}
}
