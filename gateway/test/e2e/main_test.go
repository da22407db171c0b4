// Package e2e drives the GraphQL gateway against a core started by the
// test kit (or, in external mode, against a running platform whose
// platform.env has GRAPHQL_URL=).
package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/meshplane/meshplane/sdk/process"
	"github.com/meshplane/meshplane/sdk/testing/framework"
)

func TestMain(m *testing.M) {
	code := framework.RunMain(m)
	gw.mu.Lock()
	if gw.proc != nil {
		_ = gw.proc.Stop(5 * time.Second)
	}
	gw.mu.Unlock()
	os.Exit(code)
}

var gw struct {
	mu   sync.Mutex
	url  string
	log  string
	proc *process.Process
	err  error
}

// gatewayURL starts the gateway once per package (against the shared
// core) and returns its base URL, GRAPHQL_URL.
func gatewayURL(t *testing.T) string {
	t.Helper()
	s := framework.SharedServer(t)
	gw.mu.Lock()
	defer gw.mu.Unlock()
	if gw.url != "" || gw.err != nil {
		if gw.err != nil {
			t.Fatal(gw.err)
		}
		return gw.url
	}
	if s.External {
		if p := os.Getenv(framework.PlatformEnvEnv); p != "" {
			if pl, err := framework.ReadPlatformEnv(p); err == nil && pl.URL("graphql") != "" {
				gw.url = pl.URL("graphql")
				return gw.url
			}
		}
		t.Skip("external mode without GRAPHQL_URL in the platform.env")
	}
	gw.err = startGateway(s)
	if gw.err != nil {
		t.Fatal(gw.err)
	}
	return gw.url
}

func startGateway(s *framework.Server) error {
	bin, err := framework.Binary("graphql-gateway", "gateway", "./cmd/graphql-gateway")
	if err != nil {
		return fmt.Errorf("graphql-gateway binary: %w", err)
	}
	ports, err := process.FreePorts(1)
	if err != nil {
		return err
	}
	addr := "127.0.0.1:" + strconv.Itoa(ports[0])
	gw.log = filepath.Join(s.RootDir, "graphql-gateway.log")
	lf, err := os.Create(gw.log)
	if err != nil {
		return err
	}
	cmd := exec.Command(bin, "--kubeconfig", s.Kubeconfig, "--listen", addr, "--schema-refresh-interval", "5m")
	cmd.Stdout, cmd.Stderr = lf, lf
	p, err := process.StartProcess(cmd)
	if err != nil {
		return err
	}
	gw.proc = p
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := process.WaitReady(ctx, "http://"+addr+"/readyz", 100*time.Millisecond, p.Exited()); err != nil {
		b, _ := os.ReadFile(gw.log)
		return fmt.Errorf("graphql-gateway did not get ready: %v\n%s", err, b)
	}
	gw.url = "http://" + addr
	return nil
}

// gqlError is one entry of a response's errors.
type gqlError struct {
	Message    string         `json:"message"`
	Extensions map[string]any `json:"extensions"`
}

type gqlResponse struct {
	Status int
	Data   map[string]any `json:"data"`
	Errors []gqlError     `json:"errors"`
	Raw    string
}

func (r *gqlResponse) String() string { return fmt.Sprintf("HTTP %d: %s", r.Status, r.Raw) }

// client posts GraphQL operations to one workspace as one token.
type client struct {
	url, token string
}

func newClient(t *testing.T, workspace, token string) client {
	return client{url: gatewayURL(t) + "/api/clusters/" + workspace + "/graphql", token: token}
}

func (c client) post(t *testing.T, body any) *gqlResponse {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", c.url, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", c.url, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	out := &gqlResponse{Status: resp.StatusCode, Raw: string(raw)}
	if len(raw) > 0 && raw[0] == '{' {
		_ = json.Unmarshal(raw, out)
	}
	return out
}

// do runs an operation and returns the response whatever it holds.
func (c client) do(t *testing.T, query string, vars map[string]any) *gqlResponse {
	t.Helper()
	return c.post(t, map[string]any{"query": query, "variables": vars})
}

// must runs an operation and fails the test on any error.
func (c client) must(t *testing.T, query string, vars map[string]any) map[string]any {
	t.Helper()
	r := c.do(t, query, vars)
	if r.Status != 200 || len(r.Errors) > 0 || r.Data == nil {
		t.Fatalf("GraphQL operation failed:\n%s\nanswer: %s", query, r)
	}
	return r.Data
}

// at walks a decoded JSON value by keys (strings) and indexes (ints).
func at(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			l, _ := v.([]any)
			if k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}

// userWorkspace creates a workspace in which user is cluster-admin.
func userWorkspace(t *testing.T, s *framework.Server, prefix, user string) framework.Workspace {
	t.Helper()
	ws := s.CreateOrg(t, prefix)
	s.KubectlFor(ws.Path).Run(t, "create", "clusterrolebinding", user+"-admin", "--clusterrole=cluster-admin", "--user="+user)
	framework.Eventually(t, 30*time.Second, 250*time.Millisecond, user+" to be allowed in "+ws.Path, func() (bool, string) {
		out, _, err := s.KubectlAsUser(t, user, ws.Path).RunErr(t, "auth", "can-i", "create", "configmaps")
		return err == nil && strings.TrimSpace(out) == "yes", out
	})
	return ws
}
