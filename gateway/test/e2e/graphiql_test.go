package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/meshplane/meshplane/sdk/process"
	"github.com/meshplane/meshplane/sdk/testing/framework"
)

const chromiumPath = "/usr/bin/chromium"

// TestGraphiQLInChromium loads the GraphiQL page in headless Chromium,
// types a query into it and reads the result, driving the browser over
// the DevTools protocol. scripts/install-chromium.sh (run by make test)
// installs Debian's chromium; without it the test skips.
func TestGraphiQLInChromium(t *testing.T) {
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Skipf("%s not found: run scripts/install-chromium.sh (make test does)", chromiumPath)
	}
	t.Parallel()
	s := framework.SharedServer(t)
	ws := userWorkspace(t, s, "gql-graphiql", "alice")
	s.KubectlFor(ws.Path).Run(t, "create", "configmap", "seen-in-the-browser", "-n", "default", "--from-literal=k=v")
	page := newClient(t, ws.Path, "").url

	ports, err := process.FreePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(chromiumPath, "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage",
		"--user-data-dir="+t.TempDir(), "--remote-debugging-address=127.0.0.1", "--remote-debugging-port="+strconv.Itoa(ports[0]),
		"--remote-allow-origins=*", "about:blank")
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	p, err := process.StartProcess(cmd)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = p.Stop(5 * time.Second) }()

	// The page target's DevTools websocket.
	var wsURL string
	framework.Eventually(t, 60*time.Second, 250*time.Millisecond, "Chromium's DevTools endpoint", func() (bool, string) {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/json/list", ports[0]))
		if err != nil {
			return false, err.Error() + "\n" + out.String()
		}
		defer resp.Body.Close()
		var targets []struct {
			Type string `json:"type"`
			WS   string `json:"webSocketDebuggerUrl"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&targets)
		for _, tg := range targets {
			if tg.Type == "page" && tg.WS != "" {
				wsURL = tg.WS
				return true, ""
			}
		}
		return false, fmt.Sprintf("targets: %v", targets)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cdp, err := dialCDP(ctx, wsURL)
	if err != nil {
		t.Fatal(err)
	}
	defer cdp.close()

	cdp.call(t, "Page.navigate", map[string]any{"url": page})
	eval := func(expr string) string {
		t.Helper()
		res := cdp.call(t, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true})
		var r struct {
			Result struct {
				Value any `json:"value"`
			} `json:"result"`
		}
		_ = json.Unmarshal(res, &r)
		return fmt.Sprint(r.Result.Value)
	}
	framework.Eventually(t, 30*time.Second, 200*time.Millisecond, "the GraphiQL page to load", func() (bool, string) {
		v := eval(`document.readyState + " " + (document.getElementById("query") !== null)`)
		return v == "complete true", v
	})
	framework.RequireContains(t, eval(`document.title`), "GraphiQL", "the page title")

	// The token, then the query typed into the editor, then Ctrl-Enter.
	eval(`(() => { const i = document.getElementById("token"); i.value = ` + strconv.Quote(s.UserToken(t, "alice")) + `; i.dispatchEvent(new Event("change")); return "ok"; })()`)
	eval(`(() => { const q = document.getElementById("query"); q.focus(); q.select(); return "ok"; })()`)
	cdp.call(t, "Input.insertText", map[string]any{"text": `{ v1 { ConfigMaps(namespace: "default") { items { metadata { name } } } } }`})
	for _, typ := range []string{"keyDown", "keyUp"} {
		cdp.call(t, "Input.dispatchKeyEvent", map[string]any{"type": typ, "modifiers": 2, "key": "Enter", "code": "Enter", "windowsVirtualKeyCode": 13})
	}
	var result string
	framework.Eventually(t, 30*time.Second, 200*time.Millisecond, "the query's result on the page", func() (bool, string) {
		result = eval(`document.getElementById("result").textContent`)
		return strings.Contains(result, "seen-in-the-browser"), result
	})
	framework.RequireContains(t, eval(`document.getElementById("query").value`), "ConfigMaps(namespace", "the typed query")
	t.Logf("the page shows: %s", strings.Join(strings.Fields(result), " "))
}

// cdp is a minimal Chrome DevTools protocol client: calls with ids over
// one websocket, events ignored.
type cdp struct {
	conn    *websocket.Conn
	ctx     context.Context
	mu      sync.Mutex
	next    int
	pending map[int]chan json.RawMessage
}

func dialCDP(ctx context.Context, url string) (*cdp, error) {
	conn, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		return nil, fmt.Errorf("dialing DevTools at %s: %w", url, err)
	}
	conn.SetReadLimit(64 << 20)
	c := &cdp{conn: conn, ctx: ctx, pending: map[int]chan json.RawMessage{}}
	go func() {
		for {
			_, b, err := conn.Read(ctx)
			if err != nil {
				return
			}
			var msg struct {
				ID     int             `json:"id"`
				Result json.RawMessage `json:"result"`
				Error  json.RawMessage `json:"error"`
			}
			if json.Unmarshal(b, &msg) != nil || msg.ID == 0 {
				continue
			}
			c.mu.Lock()
			ch := c.pending[msg.ID]
			delete(c.pending, msg.ID)
			c.mu.Unlock()
			if ch != nil {
				if msg.Error != nil {
					ch <- append(json.RawMessage(`{"__error":`), append(msg.Error, '}')...)
				} else {
					ch <- msg.Result
				}
			}
		}
	}()
	return c, nil
}

func (c *cdp) call(t *testing.T, method string, params map[string]any) json.RawMessage {
	t.Helper()
	c.mu.Lock()
	c.next++
	id := c.next
	ch := make(chan json.RawMessage, 1)
	c.pending[id] = ch
	c.mu.Unlock()
	b, _ := json.Marshal(map[string]any{"id": id, "method": method, "params": params})
	if err := c.conn.Write(c.ctx, websocket.MessageText, b); err != nil {
		t.Fatalf("DevTools %s: %v", method, err)
	}
	select {
	case res := <-ch:
		if strings.HasPrefix(string(res), `{"__error":`) {
			t.Fatalf("DevTools %s failed: %s", method, res)
		}
		return res
	case <-c.ctx.Done():
		t.Fatalf("DevTools %s: no answer: %v", method, c.ctx.Err())
	}
	return nil
}

func (c *cdp) close() { _ = c.conn.Close(websocket.StatusNormalClosure, "") }
