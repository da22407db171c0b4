package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestOperatorTokenRefresh: the launcher replaces the account-operator's
// token before it expires (here every 15 s, tokens valid 10 minutes), the
// operator's kubeconfig names the token file, and the operator, still the
// same process, keeps reconciling with it.
func TestOperatorTokenRefresh(t *testing.T) {
	root := filepath.Join(t.TempDir(), "p")
	p := startPlatform(t, root, freeBase(t), "--operator-token-ttl", "10m", "--operator-token-refresh", "15s")
	p.waitReady(t)
	kubeconfig := filepath.Join(root, "admin.kubeconfig")
	opKubeconfig := filepath.Join(root, "account-operator.kubeconfig")
	tokenFile := filepath.Join(root, "account-operator.token")

	if got := mustKubectl(t, opKubeconfig, "config", "view", "-o", "jsonpath={.users[0].user.tokenFile}"); got != tokenFile {
		t.Fatalf("the operator's kubeconfig names tokenFile %q, want %q", got, tokenFile)
	}
	first, err := os.ReadFile(tokenFile)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(90 * time.Second)
	for {
		now, err := os.ReadFile(tokenFile)
		if err == nil && len(now) > 0 && string(now) != string(first) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the token in %s was not replaced within 90s (refresh every 15s)\n%s", tokenFile, tail(p.out.String(), 40))
		}
		time.Sleep(500 * time.Millisecond)
	}
	if who := mustKubectl(t, opKubeconfig, "auth", "whoami", "-o", "jsonpath={.status.userInfo.username}"); who != "system:serviceaccount:default:account-operator" {
		t.Errorf("the refreshed token authenticates as %q, want the operator's ServiceAccount", who)
	}

	// The operator works on: alice's new organization gets its workspace.
	out, err := kubectl(t, kubeconfig, "--context", "alice", "create", "-f", "testdata/org-account.yaml")
	if err != nil {
		t.Fatalf("creating the org Account: %v\n%s", err, out)
	}
	waitAccountReady(t, kubeconfig, "acme")
	if strings.Contains(p.out.String(), "refreshing the token") {
		t.Errorf("the launcher reported a failed refresh:\n%s", tail(p.out.String(), 40))
	}
	select {
	case err := <-p.done:
		t.Fatalf("the launcher exited (a component stopped): %v\n%s", err, tail(p.out.String(), 40))
	default:
	}
}
