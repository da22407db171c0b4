// Package proxybody keeps an httputil.ReverseProxy from hanging when the
// server behind it answers an HTTP/2 request before reading its body.
//
// A Go HTTP/2 client that gets an answer of 300 or more before it has sent
// all of its request body stops sending it without ending its stream (the
// server does not want it, it assumes), and a Kubernetes API server
// refuses a request (403, say) before it reads the body. The proxy's own
// stream to the server then waits for body bytes that never come,
// ReverseProxy's close of the server's answer waits for that stream, and
// the client waits for the end of the answer: nobody moves. Closing the
// client's body when such an answer arrives ends the wait, as the client's
// own transport does on its side. The proxy's transport has marked its
// body write as given up before the answer reaches ModifyResponse (it does
// so for answers of 300 or more), so the read error ends that write
// quietly and the rest of the answer still comes through in full.
//
// Only an answer that came over HTTP/2 is acted on: an HTTP/1.1 transport
// does not give up its body write, a read error there closes the
// connection the answer is still arriving on (cutting it short), and it
// does not hang in the first place (closing its answer does not wait for
// the write).
//
// Use: put the client's body in the context of the request handed to the
// ReverseProxy (WithClientBody) and set its ModifyResponse to Release (or
// call Release from it).
package proxybody

import (
	"context"
	"io"
	"net/http"
)

type bodyKey struct{}

// WithClientBody returns ctx carrying r's body when r came over HTTP/2
// with one (ctx unchanged otherwise; an HTTP/1 server's body may not be
// closed while another goroutine reads it).
func WithClientBody(ctx context.Context, r *http.Request) context.Context {
	if r.ProtoMajor != 2 || r.Body == nil || r.Body == http.NoBody {
		return ctx
	}
	return context.WithValue(ctx, bodyKey{}, r.Body)
}

// Release closes the client body WithClientBody put in the context of
// res's request when res is an HTTP/2 answer of 300 or more. Its
// signature is ReverseProxy's ModifyResponse.
func Release(res *http.Response) error {
	if res.StatusCode < http.StatusMultipleChoices || res.ProtoMajor != 2 || res.Request == nil {
		return nil
	}
	if body, ok := res.Request.Context().Value(bodyKey{}).(io.Closer); ok {
		_ = body.Close()
	}
	return nil
}
