// Package kube talks HTTP to the core: requests on a caller's behalf (their
// bearer token passed through unchanged) and the admin reads the gateway
// needs to generate schemas (discovery and OpenAPI v3).
package kube

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// Client reaches the core's base URL (without /clusters/...).
type Client struct {
	Base string
	// user carries TLS only; the caller's token is set per request. It
	// speaks HTTP/1.1 over a pool of kept-alive connections: a list of 100
	// objects through the core's HTTP/2 took 1.3x the time of the same
	// request over HTTP/1.1 (Go's HTTP/2 client framing and flow control).
	user *http.Client
	// stream is user for watches: HTTP/2, so that many open watches share
	// a few connections.
	stream *http.Client
	// admin carries the gateway's own credentials.
	admin *http.Client
}

// New builds a client from the gateway's admin config.
func New(cfg *rest.Config) (*Client, error) {
	base := strings.TrimRight(cfg.Host, "/")
	if i := strings.Index(base, "/clusters/"); i >= 0 {
		base = base[:i]
	}
	adminRT, err := rest.TransportFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("admin transport: %w", err)
	}
	anon := rest.AnonymousClientConfig(cfg)
	tlsCfg, err := rest.TLSConfigFor(anon)
	if err != nil {
		return nil, fmt.Errorf("user transport: %w", err)
	}
	h1 := &http.Transport{Proxy: http.ProxyFromEnvironment, TLSClientConfig: tlsCfg, MaxIdleConnsPerHost: 100,
		IdleConnTimeout: 90 * time.Second, TLSHandshakeTimeout: 10 * time.Second}
	streamRT, err := rest.TransportFor(anon)
	if err != nil {
		return nil, fmt.Errorf("user stream transport: %w", err)
	}
	return &Client{Base: base, user: &http.Client{Transport: h1}, stream: &http.Client{Transport: streamRT}, admin: &http.Client{Transport: adminRT}}, nil
}

// RequestTimeout bounds one request of Do (watches, through Open, are not
// bounded).
var RequestTimeout = time.Minute

// Error is a failed request, with the core's Status reason and message.
type Error struct {
	Code    int
	Reason  string
	Message string
}

func (e *Error) Error() string {
	if e.Message != "" {
		return e.Message
	}
	return fmt.Sprintf("the core answered %d %s", e.Code, http.StatusText(e.Code))
}

// Extensions are the error's GraphQL extensions: code and reason, the
// Status reason (Forbidden, NotFound, ...), and status, the HTTP code.
func (e *Error) Extensions() map[string]any {
	return map[string]any{"code": e.Reason, "reason": e.Reason, "status": e.Code}
}

// IsNotFound reports a 404.
func IsNotFound(err error) bool {
	e, ok := err.(*Error)
	return ok && e.Code == http.StatusNotFound
}

// IsForbidden reports a 403.
func IsForbidden(err error) bool {
	e, ok := err.(*Error)
	return ok && e.Code == http.StatusForbidden
}

// Request is one call to the core.
type Request struct {
	Method      string
	Path        string // starting with /clusters/<workspace>/
	Query       url.Values
	ContentType string
	Body        []byte
	// Accept lists the media types to accept (application/json when "").
	Accept string
}

// URL is the request's full URL.
func (c *Client) URL(r Request) string {
	u := c.Base + r.Path
	if len(r.Query) > 0 {
		u += "?" + r.Query.Encode()
	}
	return u
}

// Do runs r with token (the admin's credentials when token is "") and
// returns the body of a 2xx answer, or an *Error.
func (c *Client) Do(ctx context.Context, token string, r Request) ([]byte, error) {
	body, err := c.DoPooled(ctx, token, r)
	if err != nil {
		return nil, err
	}
	// Not released: the caller keeps the bytes.
	return body.Bytes(), nil
}

// Body is an answer read into a pooled buffer.
type Body struct {
	buf         *bytes.Buffer
	contentType string
}

// Bytes are the answer; valid until Release.
func (b *Body) Bytes() []byte { return b.buf.Bytes() }

// ContentType is the answer's media type.
func (b *Body) ContentType() string { return b.contentType }

// Rewrite replaces the answer with what f writes from it, in another
// pooled buffer (the answer's goes back to the pool). On an error the
// answer is kept.
func (b *Body) Rewrite(contentType string, f func(dst *bytes.Buffer, src []byte) error) error {
	dst := bodies.Get().(*bytes.Buffer)
	if err := f(dst, b.buf.Bytes()); err != nil {
		dst.Reset()
		bodies.Put(dst)
		return err
	}
	b.Release()
	b.buf, b.contentType = dst, contentType
	return nil
}

// Release gives the buffer back for later answers: nothing may use Bytes
// (or anything pointing into them) after it.
func (b *Body) Release() {
	if b.buf != nil && b.buf.Cap() <= maxPooled {
		b.buf.Reset()
		bodies.Put(b.buf)
	}
	b.buf = nil
}

// maxPooled is the largest buffer kept for reuse.
const maxPooled = 4 << 20

// bodies are buffers of earlier answers: a list of 100 objects is some
// 100 KiB, read in growing steps into a fresh buffer otherwise.
var bodies = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// DoPooled is Do with the answer in a pooled buffer, for a caller that is
// done with it at a known point (Release).
func (c *Client) DoPooled(ctx context.Context, token string, r Request) (*Body, error) {
	ctx, cancel := context.WithTimeout(ctx, RequestTimeout)
	defer cancel()
	resp, err := c.open(ctx, token, r, c.user)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	buf := bodies.Get().(*bytes.Buffer)
	if resp.ContentLength > 0 && resp.ContentLength < 64<<20 {
		buf.Grow(int(resp.ContentLength))
	} else {
		buf.Grow(32 << 10)
	}
	if _, err := buf.ReadFrom(resp.Body); err != nil {
		buf.Reset()
		bodies.Put(buf)
		return nil, err
	}
	return &Body{buf: buf, contentType: resp.Header.Get("Content-Type")}, nil
}

// Open runs r and returns the open 2xx response (for streams), or an *Error.
func (c *Client) Open(ctx context.Context, token string, r Request) (*http.Response, error) {
	return c.open(ctx, token, r, c.stream)
}

func (c *Client) open(ctx context.Context, token string, r Request, user *http.Client) (*http.Response, error) {
	var body io.Reader
	if r.Body != nil {
		body = bytes.NewReader(r.Body)
	}
	req, err := http.NewRequestWithContext(ctx, r.Method, c.URL(r), body)
	if err != nil {
		return nil, err
	}
	if r.Accept != "" {
		req.Header.Set("Accept", r.Accept)
	} else {
		req.Header.Set("Accept", "application/json")
	}
	if r.ContentType != "" {
		req.Header.Set("Content-Type", r.ContentType)
	}
	hc := c.admin
	if token != "" {
		hc = user
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", r.Method, r.Path, err)
	}
	if resp.StatusCode/100 == 2 {
		return resp, nil
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return nil, statusError(r, resp.StatusCode, b)
}

// statusError is the *Error of a failed answer: the reason and message of
// the core's Status (JSON or protobuf), else the HTTP status with the body
// when it is printable text.
func statusError(r Request, code int, body []byte) *Error {
	e := &Error{Code: code}
	if st, ok := decodeStatus(body); ok {
		e.Reason, e.Message = string(st.Reason), st.Message
	}
	if e.Reason == "" {
		e.Reason = string(reasonForCode(code))
	}
	if e.Message == "" {
		e.Message = fmt.Sprintf("%s %s: %d %s", r.Method, r.Path, code, http.StatusText(code))
		if t := strings.TrimSpace(string(body)); t != "" && len(t) <= 1024 && utf8.ValidString(t) && printable(t) {
			e.Message += ": " + t
		}
	}
	return e
}

// reasonForCode is the Status reason kube gives an answer of code.
func reasonForCode(code int) metav1.StatusReason {
	switch code {
	case http.StatusBadRequest:
		return metav1.StatusReasonBadRequest
	case http.StatusUnauthorized:
		return metav1.StatusReasonUnauthorized
	case http.StatusForbidden:
		return metav1.StatusReasonForbidden
	case http.StatusNotFound:
		return metav1.StatusReasonNotFound
	case http.StatusMethodNotAllowed:
		return metav1.StatusReasonMethodNotAllowed
	case http.StatusNotAcceptable:
		return metav1.StatusReasonNotAcceptable
	case http.StatusConflict:
		return metav1.StatusReasonConflict
	case http.StatusGone:
		return metav1.StatusReasonGone
	case http.StatusRequestEntityTooLarge:
		return metav1.StatusReasonRequestEntityTooLarge
	case http.StatusUnsupportedMediaType:
		return metav1.StatusReasonUnsupportedMediaType
	case http.StatusUnprocessableEntity:
		return metav1.StatusReasonInvalid
	case http.StatusTooManyRequests:
		return metav1.StatusReasonTooManyRequests
	case http.StatusGatewayTimeout:
		return metav1.StatusReasonTimeout
	case http.StatusServiceUnavailable:
		return metav1.StatusReasonServiceUnavailable
	}
	if code >= 500 {
		return metav1.StatusReasonInternalError
	}
	return metav1.StatusReasonUnknown
}

// printable reports whether s holds no control characters other than
// whitespace.
func printable(s string) bool {
	for _, c := range s {
		if c < 0x20 && c != '\n' && c != '\t' && c != '\r' || c == 0x7f || c == utf8.RuneError {
			return false
		}
	}
	return true
}

// MyOrgs is the gateway's name of the core's "My organizations" virtual
// workspace (no workspace path or cluster name starts with "@").
const MyOrgs = "@myorgs"

// ClusterPath is /clusters/<workspace>; for MyOrgs the virtual
// workspace's /services/myorgs/clusters/root:orgs.
func ClusterPath(ws string) string {
	if ws == MyOrgs {
		return "/services/myorgs/clusters/root:orgs"
	}
	return "/clusters/" + ws
}

// ResourcePath is the path of a resource collection (name "") or object.
func ResourcePath(ws, group, version, resource, namespace, name string) string {
	var b strings.Builder
	b.WriteString(ClusterPath(ws))
	if group == "" {
		b.WriteString("/api/" + version)
	} else {
		b.WriteString("/apis/" + group + "/" + version)
	}
	if namespace != "" {
		b.WriteString("/namespaces/" + url.PathEscape(namespace))
	}
	b.WriteString("/" + resource)
	if name != "" {
		b.WriteString("/" + url.PathEscape(name))
	}
	return b.String()
}

// Resource is what ResourcePath names.
type Resource struct {
	Workspace, Group, Version, Resource, Namespace, Name string
}

// ParseResourcePath is the inverse of ResourcePath (false for any other
// path, a wildcard cluster included).
func ParseResourcePath(p string) (Resource, bool) {
	rest, ok := strings.CutPrefix(p, "/clusters/")
	if !ok {
		return Resource{}, false
	}
	parts := strings.Split(rest, "/")
	var r Resource
	r.Workspace, parts = parts[0], parts[1:]
	switch {
	case len(parts) >= 2 && parts[0] == "api":
		r.Version, parts = parts[1], parts[2:]
	case len(parts) >= 3 && parts[0] == "apis":
		r.Group, r.Version, parts = parts[1], parts[2], parts[3:]
	default:
		return Resource{}, false
	}
	if len(parts) >= 3 && parts[0] == "namespaces" {
		r.Namespace, parts = parts[1], parts[2:]
	}
	switch len(parts) {
	case 1:
		r.Resource = parts[0]
	case 2:
		r.Resource, r.Name = parts[0], parts[1]
	default:
		return Resource{}, false
	}
	for _, s := range []*string{&r.Namespace, &r.Name} {
		u, err := url.PathUnescape(*s)
		if err != nil {
			return Resource{}, false
		}
		*s = u
	}
	if r.Workspace == "" || r.Workspace == "*" || r.Version == "" || r.Resource == "" {
		return Resource{}, false
	}
	return r, true
}
