package handlerchain

import (
	"bufio"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apiserver/pkg/endpoints/metrics"
	apirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/endpoints/responsewriter"
	"k8s.io/apiserver/pkg/server/httplog"
)

// timeoutMessage is the message of kube's timeout filter, which clients
// and tests match.
const timeoutMessage = "request did not complete within the allotted timeout"

// withDeadlineStatus answers 504 with a Timeout Status, as kube's timeout
// filter does, for a request whose context ended (its deadline passed or
// the client went away) before the handler began its response. Unlike that
// filter it runs the handler in the request's own goroutine: the handler
// sees the deadline in its context, and storage calls, the registry's
// finisher and admission webhooks return when it passes. The 504 goes out
// when the handler next touches the response or returns, not at the
// deadline itself; a handler that ignores its context holds the request
// until it returns. A response already begun when the deadline passes is
// finished, where the timeout filter resets the stream. Requests without a
// deadline (watches and other long-running requests) pass untouched.
func withDeadlineStatus(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if _, ok := req.Context().Deadline(); !ok {
			h.ServeHTTP(w, req)
			return
		}
		d := &deadlineWriter{w: w, req: req}
		h.ServeHTTP(responsewriter.WrapForHTTP1Or2(d), req)
		d.handlerReturned()
	})
}

// deadlineWriter passes a handler's response through until the request's
// context ends before the response began; then it writes the 504 and
// drops what the handler writes after. Work that outlives the handler (a
// finisher's goroutine adding a warning) gets a header of its own, never
// the connection's.
type deadlineWriter struct {
	w   http.ResponseWriter
	req *http.Request

	mu       sync.Mutex
	began    bool // the handler's response began (status, body, flush or hijack)
	timedOut bool // the 504 was written
	returned bool // the handler returned
}

var _ responsewriter.UserProvidedDecorator = &deadlineWriter{}

func (d *deadlineWriter) Unwrap() http.ResponseWriter { return d.w }

// expired reports whether the response is the 504, writing it the first
// time the context is found ended before the response began. d.mu is
// held.
func (d *deadlineWriter) expired() bool {
	if d.timedOut {
		return true
	}
	if d.began || d.req.Context().Err() == nil {
		return false
	}
	d.timedOut = true
	writeTimeout(d.w, d.req)
	return true
}

func (d *deadlineWriter) Header() http.Header {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.returned || d.expired() {
		return http.Header{}
	}
	return d.w.Header()
}

func (d *deadlineWriter) WriteHeader(code int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.returned || d.expired() {
		return
	}
	// 1xx answers other than 101 precede the response.
	if code >= http.StatusOK || code == http.StatusSwitchingProtocols {
		d.began = true
	}
	d.w.WriteHeader(code)
}

func (d *deadlineWriter) Write(p []byte) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.returned || d.expired() {
		return 0, http.ErrHandlerTimeout
	}
	d.began = true
	return d.w.Write(p)
}

func (d *deadlineWriter) Flush() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.returned || d.expired() {
		return
	}
	if f, ok := d.w.(http.Flusher); ok {
		d.began = true
		f.Flush()
	}
}

func (d *deadlineWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.returned || d.expired() {
		return nil, nil, http.ErrHandlerTimeout
	}
	hj, ok := d.w.(http.Hijacker)
	if !ok {
		return nil, nil, errors.New("the response writer cannot be hijacked")
	}
	conn, rw, err := hj.Hijack()
	if err == nil {
		d.began = true
	}
	return conn, rw, err
}

// handlerReturned answers 504 if the context ended and the handler wrote
// nothing, and detaches the connection's writer from work that outlives
// the handler.
func (d *deadlineWriter) handlerReturned() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.expired()
	d.returned = true
}

// writeTimeout writes the 504 Timeout Status, dropping the content headers
// the handler may have set for a response it did not send, and records the
// termination as kube's timeout filter does.
func writeTimeout(w http.ResponseWriter, req *http.Request) {
	status := apierrors.NewTimeoutError(timeoutMessage, 0).ErrStatus
	h := w.Header()
	h.Del("Content-Encoding")
	h.Del("Content-Length")
	h.Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusGatewayTimeout)
	_ = json.NewEncoder(w).Encode(&status)
	httplog.SetStacktracePredicate(req.Context(), func(int) bool { return false })
	if info, ok := apirequest.RequestInfoFrom(req.Context()); ok {
		metrics.RecordRequestTermination(req, info, metrics.APIServerComponent, http.StatusGatewayTimeout)
	}
}
