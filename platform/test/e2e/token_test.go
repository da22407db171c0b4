package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestOperatorTokenRefresh: the launcher replaces the account-operator's
// and the security-operator's tokens before they expire (here every 15 s,
// tokens valid 10 minutes), each kubeconfig names its token file, and the
// operators, still the same processes, keep working with them.
func TestOperatorTokenRefresh(t *testing.T) {
	root := filepath.Join(t.TempDir(), "p")
	p := startPlatform(t, root, freeBase(t), "--operator-token-ttl", "10m", "--operator-token-refresh", "15s")
	p.waitReady(t)
	kubeconfig := filepath.Join(root, "admin.kubeconfig")
	// The account-operator's and the security-operator's credentials
	// (the example providers' are made by the same launcher code).
	for _, op := range []string{"account-operator", "security-operator"} {
		opKubeconfig := filepath.Join(root, op+".kubeconfig")
		tokenFile := filepath.Join(root, op+".token")
		if got := mustKubectl(t, opKubeconfig, "config", "view", "-o", "jsonpath={.users[0].user.tokenFile}"); got != tokenFile {
			t.Fatalf("the %s's kubeconfig names tokenFile %q, want %q", op, got, tokenFile)
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
		if who := mustKubectl(t, opKubeconfig, "auth", "whoami", "-o", "jsonpath={.status.userInfo.username}"); who != "system:serviceaccount:default:"+op {
			t.Errorf("the %s's refreshed token authenticates as %q, want its ServiceAccount", op, who)
		}
	}

	// The operators work on (an organization waits for both): alice's new
	// organization gets its workspace.
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
