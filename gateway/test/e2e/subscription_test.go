package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
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
	// Without Accept: text/event-stream a subscription has no stream to
	// go over: a clear error, not the first event only.
	plain := c.do(t, docBlock(t, "graphql-subscription"), nil)
	if len(plain.Errors) == 0 || !strings.Contains(plain.Errors[0].Message, "needs a stream") {
		t.Fatalf("a subscription over a plain POST: want an error that it needs a stream, got %s", plain)
	}
	got := sseSubscribe(t, ctx, c, docBlock(t, "graphql-subscription"))
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

// sseSubscribe opens a subscription over server-sent events and returns
// its data lines.
func sseSubscribe(t *testing.T, ctx context.Context, c client, query string) <-chan string {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query})
	req, _ := http.NewRequestWithContext(ctx, "POST", c.url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	framework.RequireEqual(t, resp.StatusCode, 200, "SSE status")
	got := make(chan string, 64)
	go func() {
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				got <- d
			}
		}
		close(got)
	}()
	return got
}

type stats struct{ Workspaces, Schemas, Subscriptions, Watches, AccessChecks int }

func gatewayStats(t *testing.T) stats {
	t.Helper()
	resp, err := http.Get(gatewayURL(t) + "/debug/stats")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var s stats
	_ = json.NewDecoder(resp.Body).Decode(&s)
	return s
}

// TestSubscriptionsShareWatches: five subscribers of one user to the same
// resource share one watch against the core, and all get the event; a
// different selector gets a watch of its own; all six share one access
// re-check. (Not parallel: it reads the
// gateway's counters.)
func TestSubscriptionsShareWatches(t *testing.T) {
	s := framework.SharedServer(t)
	ws := userWorkspace(t, s, "gql-share", "alice")
	c := newClient(t, ws.Path, s.UserToken(t, "alice"))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// The gateway's own two watches (APIBindings and CRDs) settle first.
	var before stats
	framework.Eventually(t, 10*time.Second, 100*time.Millisecond, "the gateway's change watches", func() (bool, string) {
		before = gatewayStats(t)
		return before.Watches >= 2 && before.Watches == before.Subscriptions, fmt.Sprintf("%+v", before)
	})
	var streams []<-chan string
	for i := 0; i < 5; i++ {
		streams = append(streams, sseSubscribe(t, ctx, c, `subscription { v1_configmaps(namespace: "default") { type object { metadata { name } } } }`))
	}
	other := sseSubscribe(t, ctx, c, `subscription { v1_configmaps(namespace: "default", labelselector: "app=x") { type object { metadata { name } } } }`)
	var during stats
	framework.Eventually(t, 10*time.Second, 100*time.Millisecond, "6 subscriptions to be open", func() (bool, string) {
		during = gatewayStats(t)
		return during.Subscriptions-before.Subscriptions == 6 && during.Watches-before.Watches >= 2, fmt.Sprintf("%+v, before %+v", during, before)
	})
	time.Sleep(300 * time.Millisecond)
	during = gatewayStats(t)
	framework.RequireEqual(t, during.Watches-before.Watches, 2, fmt.Sprintf("new watches against the core for 5 identical subscriptions and one with another selector (%+v, before %+v)", during, before))
	// One access re-check serves all six: same token, workspace, resource
	// and namespace.
	framework.RequireEqual(t, during.AccessChecks-before.AccessChecks, 1, fmt.Sprintf("access checks for the six subscriptions (%+v, before %+v)", during, before))

	s.KubectlFor(ws.Path).Run(t, "create", "configmap", "shared-event", "-n", "default")
	for i, st := range streams {
		select {
		case ev := <-st:
			framework.RequireContains(t, ev, "shared-event", fmt.Sprintf("subscriber %d's event", i))
		case <-time.After(20 * time.Second):
			t.Fatalf("subscriber %d got no event", i)
		}
	}
	select {
	case ev := <-other:
		t.Fatalf("the subscriber with labelselector app=x got an event for an unlabelled configmap: %s", ev)
	case <-time.After(500 * time.Millisecond):
	}
	cancel()
	framework.Eventually(t, 10*time.Second, 100*time.Millisecond, "the watches to close with their subscribers", func() (bool, string) {
		now := gatewayStats(t)
		return now.Watches == before.Watches && now.Subscriptions == before.Subscriptions, fmt.Sprintf("%+v, before %+v", now, before)
	})
}

// TestSubscriptionResume: a subscription with resourceVersion replays what
// happened after it (a client resuming after a disconnect).
func TestSubscriptionResume(t *testing.T) {
	t.Parallel()
	s := framework.SharedServer(t)
	ws := userWorkspace(t, s, "gql-resume", "alice")
	c := newClient(t, ws.Path, s.UserToken(t, "alice"))
	d := c.must(t, `mutation { v1 { createConfigMap(namespace: "default", object: {metadata: {name: "before"}}) { metadata { resourceVersion } } } }`, nil)
	rv, _ := at(d, "v1", "createConfigMap", "metadata", "resourceVersion").(string)
	if rv == "" {
		t.Fatalf("no resourceVersion in %v", d)
	}
	c.must(t, `mutation { v1 { createConfigMap(namespace: "default", object: {metadata: {name: "missed"}}) { metadata { name } } } }`, nil)
	c.must(t, `mutation { v1 { updateConfigMap(name: "before", namespace: "default", object: {data: {k: "v"}}) { metadata { name } } } }`, nil)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	got := sseSubscribe(t, ctx, c, fmt.Sprintf(`subscription { v1_configmaps(namespace: "default", resourceVersion: %q) { type object { metadata { name } } } }`, rv))
	var events []string
	for len(events) < 2 {
		select {
		case ev, ok := <-got:
			if !ok {
				t.Fatalf("the stream ended after %v", events)
			}
			events = append(events, ev)
		case <-ctx.Done():
			t.Fatalf("only %d events after resourceVersion %s: %v", len(events), rv, events)
		}
	}
	framework.RequireContains(t, events[0], `{"type":"ADDED","object":{"metadata":{"name":"missed"}}}`, "the first replayed event")
	framework.RequireContains(t, events[1], `{"type":"MODIFIED","object":{"metadata":{"name":"before"}}}`, "the second replayed event")
}
