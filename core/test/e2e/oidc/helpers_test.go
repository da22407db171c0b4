package oidc

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// kubectlWithToken is kubectl on a workspace path or cluster with a bearer
// token and nothing else (the admin's token is replaced by --token).
func kubectlWithToken(s *framework.Server, cluster, token string) *framework.Kubectl {
	return &framework.Kubectl{Kubeconfig: s.Kubeconfig, CacheDir: filepath.Join(s.RootDir, "kubectl-cache"),
		GlobalArgs: []string{"--context", "shard-base", "--server", s.ClusterURL(cluster), "--token", token}}
}

// whoami runs `kubectl auth whoami -o json` (a SelfSubjectReview) with
// token in cluster.
func whoami(t *testing.T, s *framework.Server, cluster, token string) authenticationv1.UserInfo {
	t.Helper()
	out, stderr, err := kubectlWithToken(s, cluster, token).RunErr(t, "auth", "whoami", "-o", "json")
	if err != nil {
		t.Fatalf("kubectl auth whoami in %s: %v: %s", cluster, err, stderr)
	}
	var r authenticationv1.SelfSubjectReview
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("decoding kubectl auth whoami: %v\n%s", err, out)
	}
	return r.Status.UserInfo
}

// requireUnauthorized fails unless kubectl with token in cluster is
// refused with 401 Unauthorized.
func requireUnauthorized(t *testing.T, s *framework.Server, cluster, token, what string) {
	t.Helper()
	out, stderr, err := kubectlWithToken(s, cluster, token).RunErr(t, "get", "configmaps", "-n", "default")
	if err == nil || !strings.Contains(stderr, "You must be logged in to the server") {
		t.Fatalf("%s in %s: want 401 Unauthorized from kubectl, got err=%v stdout=%q stderr=%q", what, cluster, err, out, stderr)
	}
}

// unauthorized reports whether a raw request with token to cluster is
// answered 401 (for polling).
func unauthorized(t *testing.T, s *framework.Server, cluster, token string) (bool, string) {
	r := s.RequestURL(t, token, "GET", s.ClusterURL(cluster)+"/api/v1/namespaces/default/configmaps", "", nil)
	return r.Err == nil && r.Code == 401, r.String()
}

func hasAll(list []string, want ...string) bool {
	for _, w := range want {
		found := false
		for _, x := range list {
			found = found || x == w
		}
		if !found {
			return false
		}
	}
	return true
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
