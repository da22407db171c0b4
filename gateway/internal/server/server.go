// Package server is the gateway's HTTP side: the per-workspace endpoint
// <base>/api/clusters/<workspace>/graphql, bearer-token checks, request
// limits, batching and the GraphiQL page, in front of gqlgen's transports.
package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"github.com/meshplane/meshplane/gateway/internal/exec"
	"github.com/meshplane/meshplane/gateway/internal/graphiql"
	"github.com/meshplane/meshplane/gateway/internal/kube"
	"github.com/meshplane/meshplane/gateway/internal/shards"
	"github.com/meshplane/meshplane/gateway/internal/watch"
)

// Limits bound what one request may ask for.
type Limits struct {
	Depth         int
	Complexity    int
	Batch         int
	InFlight      int
	Subscriptions int
	// BodyBytes bounds a request's body; a larger one is answered 413 and
	// its connection closed.
	BodyBytes int64
}

// DefaultLimits are at least as generous as Platform Mesh's gateway.
var DefaultLimits = Limits{Depth: 10, Complexity: 1000, Batch: 10, InFlight: 400, Subscriptions: 10000, BodyBytes: 8 << 20}

// Config is everything New needs.
type Config struct {
	// Kube reaches every workspace: the core, or the front proxy of a
	// sharded install (it routes /clusters/<workspace> to its shard).
	Kube *kube.Client
	// Shards, when set, is the root shard's admin config of a sharded
	// install: the gateway follows its Shards and watches each shard's
	// APIBindings and CRDs there (Kube is then the front proxy, which
	// refuses wildcard requests).
	Shards  *rest.Config
	Limits  Limits
	Refresh time.Duration
	Idle    time.Duration
	// AccessInterval is how often the access of open subscriptions is
	// re-checked (watch.DefaultAccessInterval when 0, never when < 0).
	AccessInterval time.Duration
	// GraphiQL serves the IDE to browsers (graphiql.New() when nil).
	GraphiQL *graphiql.Handler
}

// Server serves every workspace's GraphQL endpoint.
type Server struct {
	cfg      Config
	Registry *Registry
	Hub      *watch.Hub
	inflight chan struct{}
	shards   *shards.Watcher

	mu     sync.Mutex
	access map[string]time.Time // token hash + workspace -> allowed until
	// shardHubs hold the change watches of each followed shard.
	shardHubs map[*watch.Hub]bool
}

// New builds a server; call Run to keep schemas fresh.
func New(cfg Config) *Server {
	if cfg.GraphiQL == nil {
		cfg.GraphiQL = graphiql.New()
	}
	s := &Server{cfg: cfg, access: map[string]time.Time{}, shardHubs: map[*watch.Hub]bool{}}
	s.Hub = watch.NewHub(cfg.Kube, cfg.Limits.Subscriptions)
	s.Registry = NewRegistry(cfg.Kube, s.Hub, s.gqlServer, cfg.Refresh, cfg.Idle)
	if cfg.Shards != nil {
		s.shards = &shards.Watcher{Root: cfg.Shards, Start: func(ctx context.Context, shard string, c *kube.Client) {
			hub := watch.NewHub(c, 0)
			s.mu.Lock()
			s.shardHubs[hub] = true
			s.mu.Unlock()
			s.watchChanges(ctx, hub, shard)
			// A shard joining (or moving) may bring workspaces in use back.
			go s.Registry.refreshAll(ctx)
			<-ctx.Done()
			s.mu.Lock()
			delete(s.shardHubs, hub)
			s.mu.Unlock()
		}}
	}
	if cfg.Limits.InFlight > 0 {
		s.inflight = make(chan struct{}, cfg.Limits.InFlight)
	}
	return s
}

// Run keeps schemas fresh until ctx ends: watches of APIBindings and CRDs
// trigger re-checks of the workspaces they concern, and every workspace
// in use is re-checked each refresh interval as well. It also re-checks
// the access of open subscriptions.
func (s *Server) Run(ctx context.Context) {
	if s.shards != nil {
		go func() {
			if err := s.shards.Run(ctx); err != nil {
				klog.ErrorS(err, "cannot follow the shards; API changes are seen by polling only")
			}
		}()
	} else {
		s.watchChanges(ctx, s.Hub, "")
	}
	interval := s.cfg.AccessInterval
	if interval == 0 {
		interval = watch.DefaultAccessInterval
	}
	go s.Hub.RunAccessChecks(ctx, interval)
	s.Registry.Run(ctx)
}

// gqlServer is the gqlgen server of one schema.
func (s *Server) gqlServer(exe *exec.Executable) *handler.Server {
	srv := handler.New(exe)
	srv.AddTransport(transport.Websocket{
		KeepAlivePingInterval: 10 * time.Second,
		InitFunc: func(ctx context.Context, p transport.InitPayload) (context.Context, *transport.InitPayload, error) {
			c, _ := exec.CallerFrom(ctx)
			if tok := bearer(p.Authorization()); tok != "" {
				if err := s.checkAccess(ctx, tok, c.Workspace); err != nil {
					return ctx, nil, err
				}
				c.Token = tok
			}
			if c.Token == "" {
				return ctx, nil, errors.New("a bearer token is required: send Authorization: Bearer <token> in the connection_init payload or the upgrade request")
			}
			return exec.WithCaller(ctx, c), nil, nil
		},
	})
	srv.AddTransport(transport.Options{})
	srv.AddTransport(transport.SSE{})
	srv.AddTransport(transport.GET{})
	srv.AddTransport(postJSON{})
	srv.SetQueryCache(lru.New[*ast.QueryDocument](1000))
	srv.Use(extension.Introspection{})
	srv.Use(extension.AutomaticPersistedQuery{Cache: lru.New[string](100)})
	if s.cfg.Limits.Complexity > 0 {
		srv.Use(&ComplexityLimit{Max: s.cfg.Limits.Complexity})
	}
	srv.Use(DepthLimit{Max: s.cfg.Limits.Depth})
	return srv
}

func bearer(h string) string {
	if len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		return strings.TrimSpace(h[7:])
	}
	return ""
}

// writeError answers with a GraphQL error document.
func writeError(w http.ResponseWriter, code int, msg string, ext map[string]any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]any{"errors": gqlerror.List{{Message: msg, Extensions: ext}}})
}

// checkAccess asks the core, with the caller's token, whether the caller
// may see the workspace at all (its discovery), and remembers a yes for
// 30 seconds. The schema of a workspace is not shown to anyone the core
// would not show the workspace's APIs to.
func (s *Server) checkAccess(ctx context.Context, token, ws string) error {
	sum := sha256.Sum256([]byte(token))
	key := hex.EncodeToString(sum[:]) + "/" + ws
	s.mu.Lock()
	until, ok := s.access[key]
	s.mu.Unlock()
	if ok && time.Now().Before(until) {
		return nil
	}
	_, err := s.cfg.Kube.Do(ctx, token, kube.Request{Method: "GET", Path: kube.ClusterPath(ws) + "/api"})
	if err != nil {
		return err
	}
	s.mu.Lock()
	if len(s.access) > 100000 {
		s.access = map[string]time.Time{}
	}
	s.access[key] = time.Now().Add(30 * time.Second)
	s.mu.Unlock()
	return nil
}

// ServeHTTP routes /api/clusters/<workspace>/graphql and /api/myorgs/graphql.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/healthz", "/readyz", "/livez":
		_, _ = io.WriteString(w, "ok")
		return
	case "/debug/stats":
		// Counts only: how many workspaces, schemas, subscriptions and
		// watches against the core the gateway holds, and how many access
		// checks its subscriptions need each interval.
		wss, schemas := s.Registry.Stats()
		subs, watches := s.Hub.Stats()
		s.mu.Lock()
		for h := range s.shardHubs {
			_, n := h.Stats()
			watches += n
		}
		s.mu.Unlock()
		stats := map[string]int{"workspaces": wss, "schemas": schemas, "subscriptions": subs, "watches": watches,
			"accessChecks": s.Hub.AccessChecks()}
		if s.shards != nil {
			stats["shards"] = s.shards.Count()
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(stats)
		return
	}
	if strings.HasPrefix(r.URL.Path, graphiql.Prefix) {
		s.cfg.GraphiQL.ServeHTTP(w, r)
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, "/api/clusters/")
	ws, ok2 := strings.CutSuffix(rest, "/graphql")
	if r.URL.Path == "/api/myorgs/graphql" {
		// "My organizations": the Accounts of root:orgs the caller has a
		// role in, through the core's myorgs virtual workspace.
		ws, ok, ok2 = kube.MyOrgs, true, true
	}
	if !ok || !ok2 || ws == "" || strings.Contains(ws, "/") || strings.HasPrefix(ws, "@") && ws != kube.MyOrgs {
		writeError(w, http.StatusNotFound, "not found: the endpoint is /api/clusters/<workspace path or logical cluster>/graphql", nil)
		return
	}
	if max := s.cfg.Limits.BodyBytes; max > 0 && r.Body != nil && r.Body != http.NoBody {
		// Refused before anything else (the token's check costs a request
		// to the core): a declared length over the limit at once, an
		// undeclared one (chunked) when reading passes the limit.
		if r.ContentLength > max {
			s.bodyTooLarge(w)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, max)
	}
	isWS := strings.EqualFold(r.Header.Get("Upgrade"), "websocket")
	if r.Method == http.MethodGet && !isWS && strings.Contains(r.Header.Get("Accept"), "text/html") {
		s.cfg.GraphiQL.ServePage(w, ws)
		return
	}
	token := bearer(r.Header.Get("Authorization"))
	if token == "" && !isWS {
		w.Header().Set("WWW-Authenticate", `Bearer realm="meshplane graphql gateway"`)
		writeError(w, http.StatusUnauthorized, "unauthorized: send Authorization: Bearer <token>", map[string]any{"code": "UNAUTHENTICATED"})
		return
	}
	ctx := r.Context()
	if token != "" {
		if err := s.checkAccess(ctx, token, ws); err != nil {
			s.coreError(w, ws, err)
			return
		}
	}
	b, err := s.Registry.Get(ctx, ws)
	if err != nil {
		s.coreError(w, ws, err)
		return
	}
	streaming := isWS || strings.Contains(r.Header.Get("Accept"), "text/event-stream")
	if s.inflight != nil && !streaming {
		select {
		case s.inflight <- struct{}{}:
			defer func() { <-s.inflight }()
		default:
			writeError(w, http.StatusTooManyRequests, fmt.Sprintf("too many requests in flight (limit %d); retry shortly", s.cfg.Limits.InFlight), map[string]any{"code": "TOO_MANY_REQUESTS"})
			return
		}
	}
	r = r.WithContext(exec.WithCaller(ctx, exec.Caller{Workspace: ws, Token: token, Streaming: streaming}))
	if r.Method == http.MethodPost && strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			var tooLarge *http.MaxBytesError
			if errors.As(err, &tooLarge) {
				s.bodyTooLarge(w)
				return
			}
			writeError(w, http.StatusBadRequest, "reading the request: "+err.Error(), nil)
			return
		}
		if t := bytes.TrimSpace(body); len(t) > 0 && t[0] == '[' {
			s.batch(w, r, b, t)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	b.srv.ServeHTTP(w, r)
}

// batch runs a JSON array of operations, at most Limits.Batch of them.
func (s *Server) batch(w http.ResponseWriter, r *http.Request, b *built, body []byte) {
	var ops []json.RawMessage
	if err := json.Unmarshal(body, &ops); err != nil {
		writeError(w, http.StatusBadRequest, "decoding the batch: "+err.Error(), nil)
		return
	}
	if s.cfg.Limits.Batch > 0 && len(ops) > s.cfg.Limits.Batch {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("the batch holds %d operations, more than the limit of %d", len(ops), s.cfg.Limits.Batch), map[string]any{"code": "BATCH_LIMIT_EXCEEDED", "limit": s.cfg.Limits.Batch})
		return
	}
	var out bytes.Buffer
	out.WriteByte('[')
	for i, op := range ops {
		if i > 0 {
			out.WriteByte(',')
		}
		req := r.Clone(r.Context())
		req.Body = io.NopCloser(bytes.NewReader(op))
		req.ContentLength = int64(len(op))
		rec := httptest.NewRecorder()
		b.srv.ServeHTTP(rec, req)
		out.Write(bytes.TrimSpace(rec.Body.Bytes()))
	}
	out.WriteByte(']')
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(out.Bytes())
}

// bodyTooLarge answers 413 and closes the connection: the rest of the
// body is not read, so the connection could not carry another request.
func (s *Server) bodyTooLarge(w http.ResponseWriter) {
	w.Header().Set("Connection", "close")
	max := s.cfg.Limits.BodyBytes
	writeError(w, http.StatusRequestEntityTooLarge,
		fmt.Sprintf("the request body is larger than the limit of %d bytes (--max-body-bytes)", max),
		map[string]any{"code": "REQUEST_ENTITY_TOO_LARGE", "limit": max})
}

// coreError turns an error from the core into an HTTP answer with the
// core's status code.
func (s *Server) coreError(w http.ResponseWriter, ws string, err error) {
	var ke *kube.Error
	if errors.As(err, &ke) {
		msg := ke.Message
		switch ke.Code {
		case http.StatusUnauthorized:
			w.Header().Set("WWW-Authenticate", `Bearer realm="meshplane graphql gateway"`)
			msg = "unauthorized: the core does not accept this token"
		case http.StatusForbidden:
			msg = fmt.Sprintf("forbidden: the token may not access workspace %s: %s", ws, ke.Message)
		case http.StatusNotFound:
			msg = fmt.Sprintf("workspace %s not found", ws)
		}
		writeError(w, ke.Code, msg, ke.Extensions())
		return
	}
	writeError(w, http.StatusBadGateway, fmt.Sprintf("workspace %s: %v", ws, err), nil)
}
