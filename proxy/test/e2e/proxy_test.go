package e2e

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/meshplane/meshplane/sdk/process"
	"github.com/meshplane/meshplane/sdk/testing/framework"
	"github.com/meshplane/meshplane/sdk/testing/pki"
)

// setup starts a root shard that trusts the proxy's identity headers and a
// front proxy in front of it.
func setup(t *testing.T, shardArgs ...string) (*framework.Server, *framework.FrontProxy, *framework.Server) {
	t.Helper()
	shard, fp, ps, _ := setupWithMetrics(t, shardArgs...)
	return shard, fp, ps
}

// setupWithMetrics is setup with the proxy's --metrics-address; it
// returns that address's URL too.
func setupWithMetrics(t *testing.T, shardArgs ...string) (*framework.Server, *framework.FrontProxy, *framework.Server, string) {
	t.Helper()
	p := framework.NewProxyPKI(t)
	shard := framework.StartServer(t, framework.WithExtraArgs(append(p.ShardArgs(), shardArgs...)...))
	ports, err := process.FreePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	metrics := fmt.Sprintf("127.0.0.1:%d", ports[0])
	fp := framework.StartFrontProxy(t, p, shard, "--metrics-address", metrics)
	return shard, fp, fp.Server(t), "http://" + metrics
}

// client is an HTTP client of the proxy, with a client certificate when
// cert is not nil.
func client(t *testing.T, fp *framework.FrontProxy, cert *pki.Pair) *http.Client {
	t.Helper()
	ca, err := os.ReadFile(fp.PKI.ServingCA.CertFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	cfg := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	if cert != nil {
		c, err := cert.TLS()
		if err != nil {
			t.Fatal(err)
		}
		cfg.Certificates = []tls.Certificate{c}
	}
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg}}
}

// get sends GET path with headers and returns the code and body.
func get(t *testing.T, c *http.Client, url string, headers map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range headers {
		req.Header.Add(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// whoami asks the shard (through SelfSubjectReview) who the request is.
func whoami(t *testing.T, c *http.Client, base, cluster string, headers map[string]string) (int, string, []string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, base+"/clusters/"+cluster+"/apis/authentication.k8s.io/v1/selfsubjectreviews",
		strings.NewReader(`{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Add(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var review struct {
		Status struct {
			UserInfo struct {
				Username string   `json:"username"`
				Groups   []string `json:"groups"`
			} `json:"userInfo"`
		} `json:"status"`
	}
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusCreated {
		return resp.StatusCode, string(b), nil
	}
	if err := json.Unmarshal(b, &review); err != nil {
		t.Fatalf("decoding %s: %v", b, err)
	}
	return resp.StatusCode, review.Status.UserInfo.Username, review.Status.UserInfo.Groups
}

func TestFrontProxy(t *testing.T) {
	shard, fp, ps, metrics := setupWithMetrics(t)

	t.Run("kubectl ws through the proxy", func(t *testing.T) {
		k := ps.WorkspaceKubectl(t, "root")
		org := framework.UniqueName("fp")
		out := k.WS(t, "create", org, "--enter")
		framework.RequireContains(t, out, "is ready to use", "kubectl ws create --enter through the proxy")
		k.WS(t, "create", "team", "--enter")
		framework.RequireEqual(t, k.CurrentWorkspace(t), "root:"+org+":team", "current workspace after kubectl ws create team --enter")
		k.Run(t, "create", "configmap", "through-proxy", "-n", "default", "--from-literal=via=front-proxy")
		// The object is on the shard, read directly.
		framework.RequireContains(t, shard.KubectlFor("root:"+org+":team").Run(t, "get", "configmap", "through-proxy", "-n", "default", "-o", "jsonpath={.data.via}"),
			"front-proxy", "configmap written through the proxy, read on the shard")
		framework.RequireContains(t, k.WS(t, ".."), "root:"+org, "kubectl ws .. through the proxy")
		framework.RequireContains(t, k.WS(t, "tree"), "team", "kubectl ws tree through the proxy")
		// A watch streams through the proxy.
		w := ps.KubectlFor("root:"+org+":team").Background(t, time.Minute, "get", "configmaps", "-n", "default", "--watch", "-o", "name")
		defer w.Stop()
		w.WaitFor(t, 30*time.Second, "the watch to list through-proxy", func(out string) bool { return strings.Contains(out, "through-proxy") })
		ps.KubectlFor("root:"+org+":team").Run(t, "create", "configmap", "while-watching", "-n", "default")
		w.WaitFor(t, 30*time.Second, "the watch to see while-watching", func(out string) bool { return strings.Contains(out, "while-watching") })
	})

	t.Run("refused paths", func(t *testing.T) {
		c := client(t, fp, nil)
		token := map[string]string{"Authorization": "Bearer " + shard.AdminToken(t)}
		code, body := get(t, c, fp.URL+"/clusters/*/api/v1/configmaps", token)
		framework.RequireEqual(t, code, http.StatusForbidden, "GET /clusters/*/... through the proxy: "+body)
		framework.RequireContains(t, body, `"kind":"Status"`, "the refusal is a Status")
		code, body = get(t, c, fp.URL+"/clusters/%2A/api/v1/configmaps", token)
		framework.RequireEqual(t, code, http.StatusForbidden, "GET /clusters/%2A/... through the proxy: "+body)
		code, body = get(t, c, fp.URL+"/clusters/root:no-such-workspace/api/v1/namespaces", token)
		framework.RequireEqual(t, code, http.StatusForbidden, "GET of an unknown workspace through the proxy: "+body)
		code, body = get(t, c, fp.URL+"/clusters/root/api/v1/namespaces", token)
		framework.RequireEqual(t, code, http.StatusOK, "GET /clusters/root/api/v1/namespaces as admin through the proxy: "+body)
	})

	t.Run("metrics and health", func(t *testing.T) {
		c := &http.Client{Timeout: 10 * time.Second}
		code, body := get(t, c, metrics+"/metrics", nil)
		framework.RequireEqual(t, code, http.StatusOK, "GET /metrics of the proxy")
		framework.RequireContains(t, body, `meshplane_front_proxy_requests_total{code="200",shard="root"}`, "requests routed to the root shard in /metrics")
		framework.RequireContains(t, body, `meshplane_front_proxy_requests_total{code="403",shard=""}`, "requests the proxy refused in /metrics")
		framework.RequireContains(t, body, "meshplane_front_proxy_request_duration_seconds_bucket", "request durations in /metrics")
		code, _ = get(t, c, metrics+"/readyz", nil)
		framework.RequireEqual(t, code, http.StatusOK, "GET /readyz of the proxy's metrics address")
		code, _ = get(t, c, metrics+"/clusters/root/api", nil)
		framework.RequireEqual(t, code, http.StatusNotFound, "the metrics address routes nothing to shards")
	})

	t.Run("identity", func(t *testing.T) {
		alice := client(t, fp, nil)
		aliceToken := "Bearer " + shard.UserToken(t, "alice")
		check := func(what string, c *http.Client, headers map[string]string, wantUser string) {
			t.Helper()
			code, user, groups := whoami(t, c, fp.URL, "root", headers)
			if code != http.StatusCreated {
				t.Fatalf("%s: SelfSubjectReview answered %d: %s", what, code, user)
			}
			for _, g := range groups {
				if g == "system:masters" || g == "system:kcp:admin" {
					t.Fatalf("%s: the shard saw group %s (groups %v)", what, g, groups)
				}
			}
			framework.RequireEqual(t, user, wantUser, what+": user the shard saw (groups "+fmt.Sprint(groups)+")")
		}
		check("alice's token", alice, map[string]string{"Authorization": aliceToken}, "alice")
		check("alice's token with forged X-Remote-* headers", alice, map[string]string{"Authorization": aliceToken,
			"X-Remote-User": "admin", "X-Remote-Group": "system:masters", "X-Remote-Extra-Scopes": "cluster:root"}, "alice")
		check("alice's token with forged forwarding headers", alice, map[string]string{"Authorization": aliceToken,
			"X-Forwarded-For": "127.0.0.1", "X-Forwarded-User": "admin", "Forwarded": "for=127.0.0.1;by=front-proxy"}, "alice")

		// Impersonation is the shard's decision: alice may not.
		code, body, _ := whoami(t, alice, fp.URL, "root", map[string]string{"Authorization": aliceToken,
			"Impersonate-User": "kcp-admin", "Impersonate-Group": "system:masters"})
		framework.RequireEqual(t, code, http.StatusForbidden, "alice impersonating kcp-admin in system:masters through the proxy: "+body)

		// A client certificate of the proxy's client CA: the proxy forwards
		// the user, never system:masters.
		dave, err := fp.PKI.ClientCA.Client("dave", "dave", "e2e:users", "system:masters")
		if err != nil {
			t.Fatal(err)
		}
		daveClient := client(t, fp, &dave)
		check("dave's client certificate (O=system:masters)", daveClient, nil, "dave")
		check("dave's client certificate with alice's token and forged headers", daveClient, map[string]string{
			"Authorization": aliceToken, "X-Remote-User": "kcp-admin", "X-Remote-Group": "system:masters"}, "dave")
		code, body = get(t, daveClient, fp.URL+"/clusters/root/api/v1/namespaces", nil)
		framework.RequireEqual(t, code, http.StatusForbidden, "dave listing namespaces in root: "+body)

		// A certificate of another CA is not taken (Go's client does not
		// even send it: the handshake names the accepted CAs); the request
		// is anonymous at most.
		other, err := pki.NewCA(t.TempDir(), "other")
		if err != nil {
			t.Fatal(err)
		}
		mallory, err := other.Client("mallory", "kcp-admin", "system:masters")
		if err != nil {
			t.Fatal(err)
		}
		req, _ := http.NewRequest(http.MethodGet, fp.URL+"/clusters/root/api/v1/namespaces", nil)
		if resp, err := client(t, fp, &mallory).Do(req); err == nil {
			resp.Body.Close()
			framework.RequireEqual(t, resp.StatusCode, http.StatusUnauthorized, "a client certificate of an unknown CA")
		}

		// Straight to the shard, identity headers without the proxy's
		// certificate are not believed.
		direct := shard.HTTPClient(t)
		code, user, groups := whoami(t, direct, shard.BaseURL, "root", map[string]string{"Authorization": aliceToken,
			"X-Remote-User": "kcp-admin", "X-Remote-Group": "system:masters"})
		framework.RequireEqual(t, fmt.Sprint(code, " ", user), "201 alice", fmt.Sprintf("forged headers sent straight to the shard (groups %v)", groups))
	})
}
