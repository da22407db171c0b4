// Package tenancy plays a tenant attacking another: bob and alice each
// founded an organization and are cluster-admin of their own org and of
// nothing else, as in kcp. bob reads every public name and id (alice's
// workspace path and logical cluster) and writes whatever his RBAC in his
// own org allows; nothing he does reaches alice's org or the system's
// fields. Each takeover of issue 28 in the core is a test here.
package tenancy

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestMain shares one meshplane server between the tests of this package.
func TestMain(m *testing.M) {
	os.Exit(framework.RunMain(m))
}

// tenants are two organizations: alice owns one, bob the other.
type tenants struct {
	s          *framework.Server
	alice, bob framework.Workspace
	// aliceK and bobK are kubectl as alice in her org and as bob in his.
	aliceK, bobK *framework.Kubectl
}

// twoTenants founds an org for alice and one for bob (created by the
// admin, each made cluster-admin of their own only).
func twoTenants(t *testing.T) *tenants {
	t.Helper()
	s := framework.SharedServer(t)
	tn := &tenants{s: s, alice: s.CreateOrg(t, "alicecorp"), bob: s.CreateOrg(t, "bobcorp")}
	s.KubectlFor(tn.alice.Path).Run(t, "create", "clusterrolebinding", "org-owner", "--clusterrole=cluster-admin", "--user=alice")
	s.KubectlFor(tn.bob.Path).Run(t, "create", "clusterrolebinding", "org-owner", "--clusterrole=cluster-admin", "--user=bob")
	tn.aliceK = s.KubectlAsUser(t, "alice", tn.alice.Path)
	tn.bobK = s.KubectlAsUser(t, "bob", tn.bob.Path)
	return tn
}

// request sends one request as the token's user with extra headers and
// returns the status code and body.
func request(t *testing.T, s *framework.Server, token, method, path string, body []byte, headers map[string]string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, s.BaseURL+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := s.HTTPClient(t).Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
