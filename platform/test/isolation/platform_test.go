package isolation

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/meshplane/meshplane/platform/launcher"
	"github.com/meshplane/meshplane/sdk/platformenv"
	"github.com/meshplane/meshplane/sdk/process"
	"github.com/meshplane/meshplane/sdk/testing/oidcissuer"
)

// platform is the running launcher and what platform.env says about it.
type platform struct {
	root string
	base int
	env  map[string]string
	proc *process.Process
	out  *process.Buffer

	proxy, shardRoot, shardB, graphql, openfga string

	http *http.Client
	// tokens by user: alice, bob (demo users), kcp-admin, shard-admin
	// (system:masters, for the shards' wildcard views), and the OIDC users.
	tokens map[string]string
	issuer *oidcissuer.Issuer
	idp    *oidcissuer.Server // serves the platform's issuer and the tenants' own
}

// startPlatform runs `meshplane-platform --shards 2` with an OIDC issuer
// of the test's own (usernames "oidc-<sub>", plain in OpenFGA ids), the way `make run SHARDS=2
// AUTHENTICATION_CONFIG=...` does, and waits for platform.env.
func startPlatform(t *testing.T) *platform {
	t.Helper()
	dir := t.TempDir()
	p := &platform{root: filepath.Join(dir, "platform"), out: &process.Buffer{}, tokens: map[string]string{}}
	authConfig := p.startIssuer(t, dir)
	for range 50 {
		b := 20000 + rand.IntN(2000)*launcher.PortRange
		if (launcher.Ports{Base: b}).CheckFree() == nil {
			p.base = b
			break
		}
	}
	if p.base == 0 {
		t.Fatal("no free port range found")
	}
	args := []string{"--root-directory", p.root, "--port-base", strconv.Itoa(p.base), "--bin-dir", binDir,
		"--shards", "2", "--authentication-config", authConfig}
	// ISOLATION_LAUNCHER_ARGS: more launcher arguments, separated by
	// spaces (e.g. --organization-stores shared), to play the suite
	// against another layout.
	args = append(args, strings.Fields(os.Getenv("ISOLATION_LAUNCHER_ARGS"))...)
	cmd := exec.Command(launcherBin, args...)
	cmd.Stdout, cmd.Stderr = p.out, p.out
	var err error
	if p.proc, err = process.StartProcess(cmd); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.proc.Stop(90 * time.Second); err != nil {
			t.Logf("stopping the platform: %v", err)
		}
		if t.Failed() {
			t.Logf("launcher output (tail):\n%s", tail(p.out.String(), 60))
		}
	})
	deadline := time.Now().Add(4 * time.Minute)
	for {
		if env, err := platformenv.Read(filepath.Join(p.root, platformenv.FileName)); err == nil {
			p.env = env
			break
		}
		if !p.proc.Running() || time.Now().After(deadline) {
			t.Fatalf("the platform did not get ready:\n%s", tail(p.out.String(), 40))
		}
		time.Sleep(250 * time.Millisecond)
	}
	p.proxy, p.shardRoot, p.shardB = p.env["FRONT_PROXY_URL"], p.env["CORE_URL"], p.env["SHARD_B_URL"]
	p.graphql, p.openfga = p.env["GRAPHQL_URL"], p.env["OPENFGA_URL"]
	for _, k := range []string{"FRONT_PROXY_URL", "CORE_URL", "SHARD_B_URL", "GRAPHQL_URL", "OPENFGA_URL"} {
		if p.env[k] == "" {
			t.Fatalf("platform.env has no %s: %v", k, p.env)
		}
	}
	p.readCredentials(t)
	return p
}

// startIssuer starts a real OIDC issuer and writes an
// AuthenticationConfiguration trusting it; it returns the file.
func (p *platform) startIssuer(t *testing.T, dir string) string {
	t.Helper()
	srv, err := oidcissuer.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	p.idp = srv
	if p.issuer, err = srv.NewIssuer("corp", oidcissuer.ES256); err != nil {
		t.Fatal(err)
	}
	ca := "      " + strings.ReplaceAll(strings.TrimRight(srv.CAPEM(), "\n"), "\n", "\n      ")
	config := fmt.Sprintf(`apiVersion: apiserver.config.k8s.io/v1
kind: AuthenticationConfiguration
jwt:
- issuer:
    url: %s
    audiences: [meshplane]
    certificateAuthority: |
%s
  claimMappings:
    username: {claim: sub, prefix: "oidc-"}
`, p.issuer.URL, ca)
	file := filepath.Join(dir, "authentication.yaml")
	if err := os.WriteFile(file, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// oidcToken is a token of the test's issuer for user "oidc-<sub>".
func (p *platform) oidcToken(sub string) string {
	return p.issuer.Token(oidcissuer.Claims{"sub": sub, "aud": "meshplane"}, time.Hour)
}

// readCredentials reads the demo users' and the admins' tokens and the
// CAs of the proxy and the shards.
func (p *platform) readCredentials(t *testing.T) {
	t.Helper()
	f, err := os.Open(filepath.Join(p.root, "demo-users.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if len(r) >= 2 {
			p.tokens[r[1]] = r[0]
		}
	}
	pool := x509.NewCertPool()
	for _, kc := range []string{p.env["KUBECONFIG"], filepath.Join(p.root, "admin.kubeconfig")} {
		cfg, err := clientcmd.LoadFromFile(kc)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cfg.Clusters {
			pool.AppendCertsFromPEM(c.CertificateAuthorityData)
			if c.CertificateAuthority != "" {
				if data, err := os.ReadFile(c.CertificateAuthority); err == nil {
					pool.AppendCertsFromPEM(data)
				}
			}
		}
		for name, a := range cfg.AuthInfos {
			if a.Token != "" && p.tokens[name] == "" {
				p.tokens[name] = a.Token
			}
		}
	}
	for _, u := range []string{"alice", "bob", "kcp-admin", "shard-admin"} {
		if p.tokens[u] == "" {
			t.Fatalf("no token for %s in demo-users.csv or the admin kubeconfigs", u)
		}
	}
	p.http = &http.Client{Transport: &http.Transport{
		TLSClientConfig:     &tls.Config{RootCAs: pool},
		MaxIdleConnsPerHost: 32,
	}}
}

// call is one HTTP request.
type call struct {
	method string
	url    string
	token  string
	header map[string]string
	body   any // nil, []byte, string or a value sent as JSON
	// contentType defaults to application/json (merge patch for PATCH).
	contentType string
}

// answer is what came back.
type answer struct {
	code int
	body []byte
	err  error
}

func (a answer) ok() bool { return a.err == nil && a.code >= 200 && a.code < 300 }

func (a answer) String() string {
	if a.err != nil {
		return "error: " + a.err.Error()
	}
	msg := string(a.body)
	var st struct{ Message string }
	if json.Unmarshal(a.body, &st) == nil && st.Message != "" {
		msg = st.Message
	}
	if len(msg) > 300 {
		msg = msg[:300] + "..."
	}
	return fmt.Sprintf("%d %s", a.code, strings.TrimSpace(msg))
}

// decode unmarshals the body into v.
func (a answer) decode(v any) error {
	if a.err != nil {
		return a.err
	}
	return json.Unmarshal(a.body, v)
}

// proxyUnreachable is the front proxy's answer when its request to the
// shard failed: no decision of the platform, and a probe answered so
// fails the suite (report).
const proxyUnreachable = "the shard serving this request cannot be reached"

func (p *platform) do(ctx context.Context, c call) answer {
	var body io.Reader
	switch b := c.body.(type) {
	case nil:
	case []byte:
		body = bytes.NewReader(b)
	case string:
		body = strings.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			return answer{err: err}
		}
		body = bytes.NewReader(data)
	}
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, c.method, c.url, body)
	if err != nil {
		return answer{err: err}
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	if body != nil {
		ct := c.contentType
		if ct == "" {
			ct = "application/json"
			if c.method == http.MethodPatch {
				ct = "application/merge-patch+json"
			}
		}
		req.Header.Set("Content-Type", ct)
	}
	req.Header.Set("Accept", "application/json")
	for k, v := range c.header {
		req.Header.Set(k, v)
	}
	resp, err := p.http.Do(req)
	if err != nil {
		return answer{err: err}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	return answer{code: resp.StatusCode, body: data, err: err}
}

// admin is a request as the platform's admin (system:kcp:admin) through
// the front proxy.
func (p *platform) admin(ctx context.Context, method, path string, body any) answer {
	return p.do(ctx, call{method: method, url: p.proxy + path, token: p.tokens["kcp-admin"], body: body})
}

// must is do that fails the test unless the answer is 2xx.
func (p *platform) must(t *testing.T, ctx context.Context, what string, c call) answer {
	t.Helper()
	a := p.do(ctx, c)
	if !a.ok() {
		t.Fatalf("%s: %s %s: %s", what, c.method, c.url, a)
	}
	return a
}

// eventually polls cond until it is true, failing the test after timeout
// (a wait for setup, not an assertion on time).
func eventually(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, last := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s; last: %s", what, timeout, last)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
