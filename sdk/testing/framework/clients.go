package framework

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// ClusterURL is the URL of a logical cluster's API: BaseURL/clusters/<name>.
// "" gives BaseURL itself and "*" the wildcard endpoint.
func (s *Server) ClusterURL(cluster string) string {
	if cluster == "" {
		return s.BaseURL
	}
	return s.BaseURL + "/clusters/" + cluster
}

// Config is a client-go config from context kubeContext of the admin
// kubeconfig ("shard-base": the shard admin, group system:masters; "root"
// or "base": kcp-admin), talking to logical cluster or workspace path
// cluster (see ClusterURL for "" and "*").
func (s *Server) Config(kubeContext, cluster string) (*rest.Config, error) {
	return s.configFor(kubeContext, s.ClusterURL(cluster))
}

func (s *Server) configFor(kubeContext, host string) (*rest.Config, error) {
	raw, err := s.loadKubeconfig()
	if err != nil {
		return nil, fmt.Errorf("loading %s: %w", s.Kubeconfig, err)
	}
	overrides := &clientcmd.ConfigOverrides{}
	if host != "" {
		overrides.ClusterInfo.Server = host
	}
	cfg, err := clientcmd.NewNonInteractiveClientConfig(*raw.DeepCopy(), kubeContext, overrides, nil).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("building a client config from context %s of %s: %w", kubeContext, s.Kubeconfig, err)
	}
	cfg.QPS = 100
	cfg.Burst = 200
	cfg.UserAgent = "meshplane-e2e"
	return cfg, nil
}

// RESTConfig returns a client-go config for the shard admin (context
// shard-base, group system:masters) talking to logical cluster cluster (see
// ClusterURL for "" and "*").
func (s *Server) RESTConfig(t testing.TB, cluster string) *rest.Config {
	t.Helper()
	cfg, err := s.Config("shard-base", cluster)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// AdminToken is the bearer token of the shard admin (context shard-base).
func (s *Server) AdminToken(t testing.TB) string {
	t.Helper()
	cfg := s.RESTConfig(t, "")
	if cfg.BearerToken == "" {
		t.Fatalf("context shard-base in %s has no bearer token", s.Kubeconfig)
	}
	return cfg.BearerToken
}

// UserToken is the bearer token of a user from the --token-auth-file.
func (s *Server) UserToken(t testing.TB, user string) string {
	t.Helper()
	u, ok := s.users[user]
	if !ok && s.External {
		t.Skipf("token user %q is only known to servers the kit starts itself; skipped against the external server %s", user, s.BaseURL)
	}
	if !ok {
		t.Fatalf("no token user %q (known: %v)", user, s.userNames())
	}
	return u.Token
}

func (s *Server) userNames() []string {
	var names []string
	for n := range s.users {
		names = append(names, n)
	}
	return names
}

// UserRESTConfig is a client-go config for a token user on a cluster.
func (s *Server) UserRESTConfig(t testing.TB, user, cluster string) *rest.Config {
	t.Helper()
	cfg := rest.AnonymousClientConfig(s.RESTConfig(t, cluster))
	cfg.BearerToken = s.UserToken(t, user)
	return cfg
}

var unsafeFileChars = regexp.MustCompile(`[^a-zA-Z0-9._-]`)

// WriteUserKubeconfig writes a kubeconfig (in a test temporary directory)
// whose only context authenticates as the token user and points at
// BaseURL/clusters/<cluster>, trusting the CA of admin.kubeconfig.
func (s *Server) WriteUserKubeconfig(t testing.TB, user, cluster string) string {
	t.Helper()
	return s.writeTokenKubeconfig(t, user, s.UserToken(t, user), cluster)
}

// WriteAdminKubeconfig is WriteUserKubeconfig for the shard admin (its
// token; context "admin").
func (s *Server) WriteAdminKubeconfig(t testing.TB, cluster string) string {
	t.Helper()
	return s.writeTokenKubeconfig(t, "admin", s.AdminToken(t), cluster)
}

func (s *Server) writeTokenKubeconfig(t testing.TB, user, token, cluster string) string {
	t.Helper()
	raw := s.KubeconfigData(t)
	ctx := raw.Contexts["shard-base"]
	ci, ok := raw.Clusters[ctx.Cluster]
	if !ok {
		t.Fatalf("context shard-base in %s refers to missing cluster %q", s.Kubeconfig, ctx.Cluster)
	}
	out := clientcmdapi.NewConfig()
	out.Clusters["meshplane"] = &clientcmdapi.Cluster{
		Server:                   s.ClusterURL(cluster),
		CertificateAuthority:     ci.CertificateAuthority,
		CertificateAuthorityData: ci.CertificateAuthorityData,
		InsecureSkipTLSVerify:    ci.InsecureSkipTLSVerify,
		TLSServerName:            ci.TLSServerName,
	}
	out.AuthInfos[user] = &clientcmdapi.AuthInfo{Token: token}
	out.Contexts[user] = &clientcmdapi.Context{Cluster: "meshplane", AuthInfo: user}
	out.CurrentContext = user
	path := filepath.Join(t.TempDir(), unsafeFileChars.ReplaceAllString(user+"-"+cluster, "_")+".kubeconfig")
	if err := clientcmd.WriteToFile(*out, path); err != nil {
		t.Fatalf("writing kubeconfig for %s: %v", user, err)
	}
	return path
}

// HTTPClient returns a net/http client trusting the server's CA (from
// admin.kubeconfig) that does not follow redirects and carries no
// credentials: set the Authorization header yourself. It has no overall
// timeout, so use request contexts (it is fine for watches).
func (s *Server) HTTPClient(t testing.TB) *http.Client {
	t.Helper()
	cfg := s.RESTConfig(t, "")
	tlsCfg, err := rest.TLSConfigFor(cfg)
	if err != nil {
		t.Fatalf("TLS config from %s: %v", s.Kubeconfig, err)
	}
	if tlsCfg == nil {
		tlsCfg = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // test server
	}
	c := &http.Client{
		Transport: &http.Transport{TLSClientConfig: tlsCfg, ForceAttemptHTTP2: true},
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
	t.Cleanup(c.CloseIdleConnections)
	return c
}

// Response is the outcome of a raw HTTP request.
type Response struct {
	Method string
	Path   string
	Code   int
	Header http.Header
	Body   []byte
	// Err is a transport error (no response), e.g. a reset connection.
	Err error
}

// String summarizes the response for failure messages.
func (r *Response) String() string {
	if r.Err != nil {
		return fmt.Sprintf("%s %s -> transport error: %v", r.Method, r.Path, r.Err)
	}
	body := string(r.Body)
	if len(body) > 2000 {
		body = body[:2000] + fmt.Sprintf("... (%d bytes)", len(r.Body))
	}
	return fmt.Sprintf("%s %s -> %d %s", r.Method, r.Path, r.Code, body)
}

// Status decodes the body as a metav1.Status, failing the test if it is not one.
func (r *Response) Status(t testing.TB) *metav1.Status {
	t.Helper()
	if r.Err != nil {
		t.Fatalf("expected a Status response, got %s", r)
	}
	var st metav1.Status
	if err := json.Unmarshal(r.Body, &st); err != nil || st.Kind != "Status" {
		t.Fatalf("expected a JSON Status object (kind: Status) in the body, got %s (decode error: %v)", r, err)
	}
	return &st
}

// JSON decodes the body into v, failing the test on error.
func (r *Response) JSON(t testing.TB, v any) {
	t.Helper()
	if r.Err != nil {
		t.Fatalf("expected a JSON response, got %s", r)
	}
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("decoding JSON from %s: %v", r, err)
	}
}

// Request sends one HTTP request with a bearer token (none when token is
// empty) to BaseURL+path. A non-nil body is sent as application/json.
// Transport errors are returned in Response.Err, not as test failures.
func (s *Server) Request(t testing.TB, token, method, path string, body []byte) *Response {
	t.Helper()
	return s.RequestWithType(t, token, method, path, "application/json", body)
}

// RequestWithType is Request with an explicit Content-Type (for patches).
func (s *Server) RequestWithType(t testing.TB, token, method, path, contentType string, body []byte) *Response {
	t.Helper()
	r := s.RequestURL(t, token, method, s.BaseURL+path, contentType, body)
	r.Path = path
	if r.Err != nil {
		t.Logf("%s %s: transport error: %v", method, path, r.Err)
	} else {
		t.Logf("%s %s -> %d", method, path, r.Code)
	}
	return r
}

// RequestURL sends one HTTP request with a bearer token (none when empty)
// to a full URL, e.g. under a virtual workspace, without logging it (for
// polling). A non-nil body is sent with contentType ("application/json"
// when empty). Transport errors are returned in Response.Err.
func (s *Server) RequestURL(t testing.TB, token, method, url, contentType string, body []byte) *Response {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		t.Fatalf("building request %s %s: %v", method, url, err)
	}
	if body != nil {
		if contentType == "" {
			contentType = "application/json"
		}
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Accept", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	r := &Response{Method: method, Path: url}
	resp, err := s.HTTPClient(t).Do(req)
	if err != nil {
		r.Err = err
		return r
	}
	defer resp.Body.Close()
	r.Code = resp.StatusCode
	r.Header = resp.Header
	r.Body, r.Err = io.ReadAll(resp.Body)
	return r
}

// AdminRequest is Request with the shard admin's token.
func (s *Server) AdminRequest(t testing.TB, method, path string, body []byte) *Response {
	t.Helper()
	return s.Request(t, s.AdminToken(t), method, path, body)
}
