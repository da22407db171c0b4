package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestSubscriptionWebsocket subscribes over graphql-transport-ws and sees
// a configmap created with kubectl.
func TestSubscriptionWebsocket(t *testing.T) {
	t.Parallel()
	s := framework.SharedServer(t)
	ws := userWorkspace(t, s, "gql-ws", "alice")
	c := newClient(t, ws.Path, s.UserToken(t, "alice"))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	conn, _, err := websocket.Dial(ctx, strings.Replace(c.url, "http://", "ws://", 1), &websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}})
	if err != nil {
		t.Fatalf("dialing %s: %v", c.url, err)
	}
	defer conn.Close(websocket.StatusNormalClosure, "")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(wsjson.Write(ctx, conn, map[string]any{"type": "connection_init", "payload": map[string]any{"Authorization": "Bearer " + c.token}}))
	var msg struct {
		ID      string          `json:"id"`
		Type    string          `json:"type"`
		Payload json.RawMessage `json:"payload"`
	}
	must(wsjson.Read(ctx, conn, &msg))
	framework.RequireEqual(t, msg.Type, "connection_ack", "the answer to connection_init ("+string(msg.Payload)+")")
	must(wsjson.Write(ctx, conn, map[string]any{"id": "1", "type": "subscribe", "payload": map[string]any{"query": docBlock(t, "graphql-subscription")}}))

	// The watch starts when the subscription is accepted; create until an
	// event arrives so that a create racing the subscription does not hang.
	got := make(chan string, 16)
	go func() {
		for {
			var m struct {
				Type    string          `json:"type"`
				Payload json.RawMessage `json:"payload"`
			}
			if err := wsjson.Read(ctx, conn, &m); err != nil {
				close(got)
				return
			}
			if m.Type == "next" || m.Type == "error" {
				got <- m.Type + " " + string(m.Payload)
			}
		}
	}()
	waitEvent(t, s, ws.Path, "ws", got)
}

// TestSubscriptionSSE subscribes over server-sent events.
func TestSubscriptionSSE(t *testing.T) {
	t.Parallel()
	s := framework.SharedServer(t)
	ws := userWorkspace(t, s, "gql-sse", "alice")
	c := newClient(t, ws.Path, s.UserToken(t, "alice"))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	body, _ := json.Marshal(map[string]any{"query": docBlock(t, "graphql-subscription")})
	req, _ := http.NewRequestWithContext(ctx, "POST", c.url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	framework.RequireEqual(t, resp.StatusCode, 200, "SSE status")
	got := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				got <- d
			}
		}
		close(got)
	}()
	waitEvent(t, s, ws.Path, "sse", got)
}

// waitEvent creates configmaps with kubectl until an ADDED event for one
// of them arrives.
func waitEvent(t *testing.T, s *framework.Server, ws, prefix string, got <-chan string) {
	t.Helper()
	k := s.KubectlFor(ws)
	deadline := time.Now().Add(45 * time.Second)
	for i := 0; time.Now().Before(deadline); i++ {
		name := prefix + "-" + string(rune('a'+i%26))
		k.Run(t, "create", "configmap", name, "-n", "default", "--from-literal=made=by-kubectl")
		timeout := time.After(3 * time.Second)
		for {
			select {
			case ev, ok := <-got:
				if !ok {
					t.Fatal("the subscription stream ended before an event arrived")
				}
				if strings.Contains(ev, `"type":"ADDED"`) && strings.Contains(ev, `"name":"`+prefix+`-`) && strings.Contains(ev, "by-kubectl") {
					t.Logf("event: %s", ev)
					return
				}
				t.Logf("other message: %s", ev)
				continue
			case <-timeout:
			}
			break
		}
	}
	t.Fatal("no ADDED event for a configmap created with kubectl arrived")
}
