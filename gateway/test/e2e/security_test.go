package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql/introspection"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// grantWorkspaceAccess lets user into ws (the workspace itself and its
// discovery) without any right on its resources.
func grantWorkspaceAccess(t *testing.T, s *framework.Server, ws framework.Workspace, user string) {
	t.Helper()
	s.KubectlFor(ws.Path).Run(t, "create", "clusterrolebinding", user+"-access", "--clusterrole=system:kcp:workspace:access", "--user="+user)
}

// TestSubscriptionEndsWhenAccessRevoked: carol may watch configmaps and
// subscribes; the binding that allowed it is deleted (the one to watch
// configmaps, or the one to enter the workspace at all); the subscription
// ends with an "access revoked" error and delivers nothing after it,
// although configmaps keep changing. (The core authorizes a watch only
// when it starts, so without the gateway's re-check the events flow on.)
func TestSubscriptionEndsWhenAccessRevoked(t *testing.T) {
	t.Parallel()
	for _, binding := range []string{"carol-cm-watcher", "carol-access"} {
		t.Run(binding, func(t *testing.T) {
			t.Parallel()
			subscriptionRevoked(t, binding)
		})
	}
}

func subscriptionRevoked(t *testing.T, binding string) {
	s := framework.SharedServer(t)
	ws := userWorkspace(t, s, "gql-revoke", "alice")
	admin := s.KubectlFor(ws.Path)
	grantWorkspaceAccess(t, s, ws, "carol")
	admin.Run(t, "create", "clusterrole", "cm-watcher", "--verb=get,list,watch", "--resource=configmaps")
	admin.Run(t, "create", "clusterrolebinding", "carol-cm-watcher", "--clusterrole=cm-watcher", "--user=carol")
	framework.Eventually(t, 30*time.Second, 250*time.Millisecond, "carol to be allowed to watch configmaps", func() (bool, string) {
		out, _, err := s.KubectlAsUser(t, "carol", ws.Path).RunErr(t, "auth", "can-i", "watch", "configmaps", "-n", "default")
		return err == nil && strings.TrimSpace(out) == "yes", out
	})
	c := newClient(t, ws.Path, s.UserToken(t, "carol"))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	got := sseSubscribe(t, ctx, c, `subscription { v1_configmaps(namespace: "default") { type object { metadata { name } data } } }`)
	waitEvent(t, s, ws.Path, "before", got)

	admin.Run(t, "delete", "clusterrolebinding", binding)
	revoked := time.Now()
	// Changes go on while the gateway has not noticed; every event carol
	// still gets must come before the error.
	stopWriting := make(chan struct{})
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		for i := 0; ; i++ {
			select {
			case <-stopWriting:
				return
			case <-time.After(200 * time.Millisecond):
			}
			_, _, _ = admin.RunErr(t, "create", "configmap", fmt.Sprintf("after-%d", i), "-n", "default")
		}
	}()
	defer func() { close(stopWriting); <-writerDone }()

	var errLine string
	for errLine == "" {
		select {
		case d, ok := <-got:
			if !ok {
				t.Fatal("the subscription ended without an error")
			}
			if strings.Contains(d, `"errors"`) {
				errLine = d
			}
		case <-ctx.Done():
			t.Fatalf("the subscription went on for %s after carol's access was revoked", time.Since(revoked).Round(time.Second))
		}
	}
	t.Logf("the subscription ended %s after the revocation: %s", time.Since(revoked).Round(10*time.Millisecond), errLine)
	var resp struct {
		Data   json.RawMessage `json:"data"`
		Errors []gqlError      `json:"errors"`
	}
	if err := json.Unmarshal([]byte(errLine), &resp); err != nil || len(resp.Errors) == 0 {
		t.Fatalf("the error event %q: %v", errLine, err)
	}
	framework.RequireContains(t, resp.Errors[0].Message, "access revoked", "the subscription's error")
	framework.RequireEqual(t, resp.Errors[0].Extensions["code"], any("ACCESS_REVOKED"), "the error's extensions.code")
	// After the error the stream ends: nothing more arrives, though
	// configmaps are still being created.
	for d := range got {
		t.Errorf("delivered after the access-revoked error: %s", d)
	}
}

// TestCoreErrorsDecoded: a list the core refuses answers the core's
// Status message and reason, not the protobuf bytes of its answer (a list
// of a built-in kind is asked for as protobuf).
func TestCoreErrorsDecoded(t *testing.T) {
	t.Parallel()
	s := framework.SharedServer(t)
	ws := userWorkspace(t, s, "gql-status", "alice")
	grantWorkspaceAccess(t, s, ws, "carol")
	c := newClient(t, ws.Path, s.UserToken(t, "carol"))
	var r *gqlResponse
	framework.Eventually(t, 30*time.Second, 250*time.Millisecond, "carol to reach the workspace", func() (bool, string) {
		r = c.do(t, `{ v1 { ConfigMaps(namespace: "default") { items { metadata { name } } } } }`, nil)
		return r.Status == http.StatusOK, r.String()
	})
	if len(r.Errors) != 1 {
		t.Fatalf("carol's list of configmaps: want one error, got %s", r)
	}
	e := r.Errors[0]
	t.Logf("error: %s %v", e.Message, e.Extensions)
	for _, bad := range []string{"\x00", "k8s", "\ufffd"} {
		if strings.Contains(e.Message, bad) {
			t.Errorf("the error message holds %q, raw bytes of the core's answer: %q", bad, e.Message)
		}
	}
	framework.RequireContains(t, e.Message, `configmaps is forbidden: User "carol" cannot list resource "configmaps"`, "the error message")
	framework.RequireEqual(t, e.Extensions["code"], any("Forbidden"), "extensions.code")
	framework.RequireEqual(t, e.Extensions["reason"], any("Forbidden"), "extensions.reason")
	framework.RequireEqual(t, e.Extensions["status"], any(float64(403)), "extensions.status")
}

// TestIntrospectionComplexity: introspection counts in the complexity
// limit, each alias on its own: 10,000 aliased __schema selections are
// refused with a complexity error (they ran 24 s and grew the gateway to
// 205 MB when __schema did not count), while GraphiQL's own introspection
// query passes. (Not parallel: it reads the gateway's memory.) Below the
// limit: 9 aliased __schema { types { fields { name } } } took 30 ms and
// 0.35 MB of answer on the test core's root (250 of them, which fit when
// __schema counted like a plain field, 2.9 s and 9.6 MB).
func TestIntrospectionComplexity(t *testing.T) {
	s := framework.SharedServer(t)
	c := newClient(t, "root", s.AdminToken(t))

	r := c.do(t, introspection.Query, nil)
	if r.Status != http.StatusOK || len(r.Errors) > 0 {
		t.Fatalf("GraphiQL's introspection query was refused: %.500s", r.Raw)
	}

	var b strings.Builder
	b.WriteString("{")
	for i := range 10000 {
		fmt.Fprintf(&b, " s%d: __schema { queryType { name } }", i)
	}
	b.WriteString(" }")
	before := gatewayRSS(t)
	start := time.Now()
	r = c.do(t, b.String(), nil)
	took := time.Since(start)
	after := gatewayRSS(t)
	t.Logf("10,000 aliased __schema: HTTP %d in %s, gateway RSS %d MB -> %d MB", r.Status, took.Round(time.Millisecond), before>>20, after>>20)
	if len(r.Errors) == 0 || !strings.Contains(r.Errors[0].Message, "complexity") {
		t.Fatalf("10,000 aliased __schema selections were not refused with a complexity error: %.300s", r.Raw)
	}
	framework.RequireEqual(t, r.Errors[0].Extensions["code"], any("COMPLEXITY_LIMIT_EXCEEDED"), "extensions.code")
	if strings.Contains(r.Raw, `"queryType"`) {
		t.Fatalf("the refused operation was run: %.300s", r.Raw)
	}

	// __type counts as well: 12 per alias, 100 aliases are 1200.
	b.Reset()
	b.WriteString("{")
	for i := range 100 {
		fmt.Fprintf(&b, ` t%d: __type(name: "ConfigMap") { name }`, i)
	}
	b.WriteString(" }")
	r = c.do(t, b.String(), nil)
	if len(r.Errors) == 0 || !strings.Contains(r.Errors[0].Message, "complexity") {
		t.Fatalf("100 aliased __type selections were not refused with a complexity error: %.300s", r.Raw)
	}
}

// gatewayRSS is the resident memory of the gateway the test started (0
// against an external one).
func gatewayRSS(t *testing.T) int64 {
	t.Helper()
	gw.mu.Lock()
	p := gw.proc
	gw.mu.Unlock()
	if p == nil {
		return 0
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.PID()))
	if err != nil {
		return 0
	}
	for l := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// TestBodyTooLarge: a body over the limit (8 MiB by default) is answered
// 413 with a message naming the limit, and the connection is closed, for
// a client that writes the whole body before reading, with a declared
// length and chunked.
func TestBodyTooLarge(t *testing.T) {
	t.Parallel()
	s := framework.SharedServer(t)
	c := newClient(t, "root", s.AdminToken(t))
	u, err := url.Parse(c.url)
	if err != nil {
		t.Fatal(err)
	}
	for _, chunked := range []bool{false, true} {
		t.Run(fmt.Sprintf("chunked=%v", chunked), func(t *testing.T) {
			resp, body, closed := sendWholeBody(t, u, c.token, 30<<20, chunked)
			t.Logf("answer: %s %s", resp.Status, body)
			framework.RequireEqual(t, resp.StatusCode, http.StatusRequestEntityTooLarge, "status of a 30 MB body ("+body+")")
			framework.RequireContains(t, body, "larger than the limit of 8388608 bytes", "the 413's message")
			if !closed {
				t.Error("the connection stayed open after the 413")
			}
		})
	}
	// A body under the limit still works.
	c.must(t, `{ __typename }`, nil)
}

// sendWholeBody POSTs size bytes of a JSON document over a raw
// connection, writing all of it before reading (a write the server
// refuses ends the writing), and returns the answer and whether the
// server closed the connection after it. The connection's deadline turns
// a hang into a failure.
func sendWholeBody(t *testing.T, u *url.URL, token string, size int, chunked bool) (*http.Response, string, bool) {
	t.Helper()
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(60 * time.Second))
	head := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\n", u.Path, u.Host, token)
	if chunked {
		head += "Transfer-Encoding: chunked\r\n\r\n"
	} else {
		head += fmt.Sprintf("Content-Length: %d\r\n\r\n", size)
	}
	// {"query":"{ __typename }","pad":"aaaa...a"}
	prefix := `{"query":"{ __typename }","pad":"`
	chunk := []byte(strings.Repeat("a", 1<<20))
	write := func(b []byte) error {
		if chunked {
			if _, err := fmt.Fprintf(conn, "%x\r\n", len(b)); err != nil {
				return err
			}
		}
		if _, err := conn.Write(b); err != nil {
			return err
		}
		if chunked {
			_, err := io.WriteString(conn, "\r\n")
			return err
		}
		return nil
	}
	werr := func() error {
		if _, err := io.WriteString(conn, head); err != nil {
			return err
		}
		if err := write([]byte(prefix)); err != nil {
			return err
		}
		for n := len(prefix) + 2; n < size; n += len(chunk) {
			if err := write(chunk[:min(len(chunk), size-n)]); err != nil {
				return err
			}
		}
		if err := write([]byte(`"}`)); err != nil {
			return err
		}
		if chunked {
			_, err := io.WriteString(conn, "0\r\n\r\n")
			return err
		}
		return nil
	}()
	var ne net.Error
	if errors.As(werr, &ne) && ne.Timeout() {
		t.Fatalf("writing the body hung: %v", werr)
	}
	t.Logf("writing the body: %v", werr)
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("reading the answer: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	// Closed: the next read ends (EOF or reset) instead of waiting for
	// another answer.
	_, err = br.ReadByte()
	closed := err != nil && !(errors.As(err, &ne) && ne.Timeout())
	return resp, string(b), closed
}
