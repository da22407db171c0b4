package routing

import (
	"crypto/tls"
	"net/http"
)

// NewTransports returns the transports to the shards from base (the
// shards' CA, server name); the identified one also presents cert (nil:
// Identified is Anonymous).
//
// Anonymous speaks HTTP/1.1 only. A shard answers a request it cannot
// authenticate, or finds anonymous, with "Connection: close" (Kubernetes'
// UnauthenticatedHTTP2DOSMitigation), which on HTTP/2 is a GOAWAY for the
// whole connection: on one shared by many callers, every request in
// flight on it that the transport cannot send again (its body begun)
// would fail, a 502 in place of the shard's answer, and any caller could
// do that to everybody else's requests with a bad token. Over HTTP/1.1 the
// close ends the refused request's own connection only. Identified
// requests carry a user the shards always authenticate, so they keep
// HTTP/2.
func NewTransports(base *tls.Config, cert *tls.Certificate) Transports {
	if base == nil {
		base = &tls.Config{}
	}
	mk := func(tc *tls.Config, h2 bool) *http.Transport {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.TLSClientConfig = tc
		t.MaxIdleConnsPerHost = 100
		t.ForceAttemptHTTP2 = h2
		if !h2 {
			// A non-nil empty map turns HTTP/2 off (net/http's doc);
			// NextProtos http/1.1 keeps the shards' ALPN from offering it.
			t.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
			tc.NextProtos = []string{"http/1.1"}
		}
		return t
	}
	out := Transports{Anonymous: mk(base.Clone(), false)}
	if cert == nil {
		out.Identified = out.Anonymous
		return out
	}
	identified := base.Clone()
	identified.Certificates = []tls.Certificate{*cert}
	out.Identified = mk(identified, true)
	return out
}
