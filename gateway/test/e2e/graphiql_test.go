package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
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

// TestGraphiQLInChromium loads GraphiQL from the gateway in headless
// Chromium and works it through its own UI, driven over the DevTools
// protocol: the bearer token typed into its Headers tab, a query typed into
// its editor and run with its Run button, then a subscription (graphql-ws
// over the page's websocket) that shows a configmap created with kubectl.
// The browser may reach nothing but 127.0.0.1, and every request it made is
// checked to have gone there. scripts/install-test-deps.sh (run by make
// test) installs Debian's chromium; without it the test skips.
func TestGraphiQLInChromium(t *testing.T) {
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Skipf("%s not found: run scripts/install-test-deps.sh (make test does)", chromiumPath)
	}
	t.Parallel()
	s := framework.SharedServer(t)
	ws := userWorkspace(t, s, "gql-graphiql", "alice")
	kc := s.KubectlFor(ws.Path)
	kc.Run(t, "create", "configmap", "seen-in-the-browser", "-n", "default", "--from-literal=k=v")
	page := newClient(t, ws.Path, "").url

	ports, err := process.FreePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(chromiumPath, "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage", "--window-size=1400,900",
		// Nothing but loopback resolves: GraphiQL must come from the gateway.
		"--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
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
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	cdp, err := dialCDP(ctx, wsURL)
	if err != nil {
		t.Fatal(err)
	}
	defer cdp.close()
	b := &browser{t: t, cdp: cdp}
	defer b.screenshotOnFailure()

	cdp.call(t, "Network.enable", map[string]any{})
	cdp.call(t, "Page.navigate", map[string]any{"url": page})
	framework.Eventually(t, 60*time.Second, 250*time.Millisecond, "GraphiQL to render", func() (bool, string) {
		v := b.eval(`document.readyState + " " + (document.querySelector(".graphiql-query-editor .CodeMirror") !== null) + " " + (document.querySelector(".graphiql-execute-button") !== null)`)
		return v == "complete true true", v
	})
	framework.RequireContains(t, b.eval(`document.title`), "GraphiQL", "the page title")

	// The token, typed into the Headers tab (open by default).
	b.typeInto(".graphiql-editor-tool .CodeMirror", `{"Authorization": "Bearer `+s.UserToken(t, "alice")+`"}`)
	// A query, typed into the query editor and run with the Run button.
	b.typeInto(".graphiql-query-editor .CodeMirror", `{ v1 { ConfigMaps(namespace: "default") { items { metadata { name } } } } }`)
	b.waitParsed("query")
	b.click(".graphiql-execute-button")
	var result string
	framework.Eventually(t, 30*time.Second, 200*time.Millisecond, "the query's result in GraphiQL's response pane", func() (bool, string) {
		result = b.eval(`document.querySelector(".graphiql-response .CodeMirror").CodeMirror.getValue()`)
		return strings.Contains(result, "seen-in-the-browser"), result
	})
	t.Logf("GraphiQL shows: %s", strings.Join(strings.Fields(result), " "))

	// A subscription: GraphiQL opens a graphql-ws websocket with the
	// headers as connection_init payload. Configmaps are created until one
	// shows (the first may come before the watch is open).
	b.typeInto(".graphiql-query-editor .CodeMirror", `subscription { v1_configmaps(namespace: "default") { type object { metadata { name } } } }`)
	b.waitParsed("subscription")
	b.click(".graphiql-execute-button")
	created := 0
	framework.Eventually(t, 60*time.Second, time.Second, "a configmap created with kubectl in GraphiQL's subscription result", func() (bool, string) {
		result = b.eval(`document.querySelector(".graphiql-response .CodeMirror").CodeMirror.getValue()`)
		if strings.Contains(result, "made-while-watching-") && strings.Contains(result, "ADDED") {
			return true, ""
		}
		created++
		kc.Run(t, "create", "configmap", fmt.Sprintf("made-while-watching-%d", created), "-n", "default")
		return false, result
	})
	t.Logf("the subscription shows: %s", strings.Join(strings.Fields(result), " "))

	// A token handed over in the URL's fragment fills the Authorization
	// header and leaves the address bar.
	cdp.call(t, "Page.navigate", map[string]any{"url": "about:blank"})
	cdp.call(t, "Page.navigate", map[string]any{"url": page + "#token=handed-over"})
	framework.Eventually(t, 30*time.Second, 200*time.Millisecond, "the fragment's token in the Headers tab", func() (bool, string) {
		v := b.eval(`(() => { const e = [...document.querySelectorAll(".graphiql-editor-tool .CodeMirror")].find(e => e.getBoundingClientRect().left >= 0); return location.hash + "|" + (e ? e.CodeMirror.getValue() : ""); })()`)
		return strings.HasPrefix(v, "|") && strings.Contains(v, "Bearer handed-over"), v
	})

	// Every request the browser made went to the gateway on 127.0.0.1,
	// among them GraphiQL's files and the websocket.
	var urls []string
	for _, u := range cdp.requestURLs() {
		if len(u) > 100 {
			u = u[:100] + "..."
		}
		urls = append(urls, u)
	}
	var sawJS, sawWS bool
	for _, u := range urls {
		switch {
		case strings.HasPrefix(u, "data:") || strings.HasPrefix(u, "blob:") || u == "about:blank":
		case strings.HasPrefix(u, "http://127.0.0.1:") || strings.HasPrefix(u, "ws://127.0.0.1:"):
			sawJS = sawJS || strings.HasSuffix(u, "/graphiql.min.js")
			sawWS = sawWS || strings.HasPrefix(u, "ws://")
		default:
			t.Errorf("the browser requested %s, beyond 127.0.0.1", u)
		}
	}
	if !sawJS || !sawWS {
		t.Errorf("expected GraphiQL's bundle and a websocket among the browser's requests: %v", urls)
	}
}

// browser drives a page through DevTools: evaluating, typing and clicking
// as a user would.
type browser struct {
	t   *testing.T
	cdp *cdp
}

func (b *browser) eval(expr string) string {
	b.t.Helper()
	res := b.cdp.call(b.t, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true})
	var r struct {
		Result struct {
			Value any `json:"value"`
		} `json:"result"`
	}
	_ = json.Unmarshal(res, &r)
	if r.Result.Value == nil {
		return ""
	}
	return fmt.Sprint(r.Result.Value)
}

// center returns the middle of the first visible element matched by
// selector (its top line for a tall one), in CSS pixels of the viewport.
func (b *browser) center(selector string) (float64, float64) {
	b.t.Helper()
	v := b.eval(`(() => { const e = [...document.querySelectorAll(` + strconv.Quote(selector) + `)].find(e => { const r = e.getBoundingClientRect(); return r.width > 0 && r.left >= 0 && r.top >= 0; }); if (!e) return ""; e.scrollIntoView({block: "center"}); const r = e.getBoundingClientRect(); return (r.left + r.width / 2) + "," + (r.top + Math.min(r.height / 2, 12)); })()`)
	var x, y float64
	if _, err := fmt.Sscanf(v, "%g,%g", &x, &y); err != nil {
		b.t.Fatalf("no element %s on the page (%q)", selector, v)
	}
	return x, y
}

// click presses and releases the left mouse button on selector.
func (b *browser) click(selector string) {
	b.t.Helper()
	x, y := b.center(selector)
	for _, typ := range []string{"mousePressed", "mouseReleased"} {
		b.cdp.call(b.t, "Input.dispatchMouseEvent", map[string]any{"type": typ, "x": x, "y": y, "button": "left", "clickCount": 1})
	}
}

// typeInto clicks into the editor matched by selector, selects all it
// holds (Ctrl-A) and types text in its place.
func (b *browser) typeInto(selector, text string) {
	b.t.Helper()
	b.click(selector)
	for _, typ := range []string{"keyDown", "keyUp"} {
		b.cdp.call(b.t, "Input.dispatchKeyEvent", map[string]any{"type": typ, "modifiers": 2, "key": "a", "code": "KeyA", "windowsVirtualKeyCode": 65, "commands": []string{"selectAll"}})
	}
	b.cdp.call(b.t, "Input.insertText", map[string]any{"text": text})
}

// waitParsed waits until GraphiQL has parsed the query editor's text (it
// does so 100ms after the last keystroke, and only then knows that an
// operation is a subscription) and found an operation of kind.
func (b *browser) waitParsed(kind string) {
	b.t.Helper()
	framework.Eventually(b.t, 10*time.Second, 50*time.Millisecond, "GraphiQL to parse the typed "+kind, func() (bool, string) {
		v := b.eval(`(() => { const d = document.querySelector(".graphiql-query-editor .CodeMirror").CodeMirror.documentAST; return d ? d.definitions[0].operation : "not parsed"; })()`)
		return v == kind, v
	})
}

// screenshotOnFailure saves what the page showed when the test failed.
func (b *browser) screenshotOnFailure() {
	if !b.t.Failed() {
		return
	}
	res := b.cdp.call(b.t, "Page.captureScreenshot", map[string]any{"format": "png"})
	var r struct {
		Data []byte `json:"data"`
	}
	if json.Unmarshal(res, &r) == nil && len(r.Data) > 0 {
		f := filepath.Join(os.TempDir(), fmt.Sprintf("graphiql-failure-%d.png", time.Now().UnixNano()))
		if os.WriteFile(f, r.Data, 0o644) == nil {
			b.t.Logf("the page at the failure: %s", f)
		}
	}
}

// cdp is a minimal Chrome DevTools protocol client: calls with ids over
// one websocket, events ignored.
type cdp struct {
	conn    *websocket.Conn
	ctx     context.Context
	mu      sync.Mutex
	next    int
	pending map[int]chan json.RawMessage
	urls    []string // of Network.requestWillBeSent and Network.webSocketCreated
}

// requestURLs are the URLs the page requested so far (Network.enable
// first).
func (c *cdp) requestURLs() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.urls...)
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
				Method string          `json:"method"`
				Params struct {
					URL     string `json:"url"`
					Request struct {
						URL string `json:"url"`
					} `json:"request"`
				} `json:"params"`
			}
			if json.Unmarshal(b, &msg) != nil {
				continue
			}
			if msg.ID == 0 {
				c.mu.Lock()
				switch msg.Method {
				case "Network.requestWillBeSent":
					c.urls = append(c.urls, msg.Params.Request.URL)
				case "Network.webSocketCreated":
					c.urls = append(c.urls, msg.Params.URL)
				}
				c.mu.Unlock()
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
