package handlerchain

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/baggage"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	genericapifilters "k8s.io/apiserver/pkg/endpoints/filters"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/component-base/tracing"

	"github.com/meshplane/meshplane/core/internal/tracecontext"
)

const (
	testTraceID     = "4bf92f3577b34da6a3ce929d0e0e4736"
	testTraceparent = "00-" + testTraceID + "-00f067aa0ba902b7-01"
)

// traceSeen is what the API handler found in its request's context.
type traceSeen struct {
	valid   bool
	traceID string
	baggage string
}

// sendTraced sends a GET with the given headers through the chain built
// by build (with the Config's no-op tracer provider) and returns what the
// handler saw.
func sendTraced(t *testing.T, build func(http.Handler, *genericapiserver.Config, *Signals) http.Handler, header http.Header) traceSeen {
	t.Helper()
	var seen traceSeen
	url, client, _ := serveChain(t, time.Minute, nil, build, func(w http.ResponseWriter, r *http.Request) {
		sc := trace.SpanContextFromContext(r.Context())
		seen = traceSeen{valid: sc.IsValid(), traceID: sc.TraceID().String(), baggage: baggage.FromContext(r.Context()).String()}
	})
	req, err := http.NewRequest(http.MethodGet, url+"/api/v1/namespaces/default/configmaps/c", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header = header
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return seen
}

// An incoming trace context reaches the request's context as through
// kube's chain; without one the context has none, as through kube's.
func TestTraceContextAsInKubesChain(t *testing.T) {
	for name, header := range map[string]http.Header{
		"traceparent":         {"Traceparent": {testTraceparent}},
		"traceparent+baggage": {"Traceparent": {testTraceparent}, "Baggage": {"tenant=acme"}},
		"baggage only":        {"Baggage": {"tenant=acme"}},
		"none":                {},
	} {
		t.Run(name, func(t *testing.T) {
			got := sendTraced(t, Build, header)
			want := sendTraced(t, kubeChain, header)
			if got != want {
				t.Fatalf("the handler saw %+v, through kube's chain %+v", got, want)
			}
			if header.Get("Traceparent") != "" && (!got.valid || got.traceID != testTraceID) {
				t.Errorf("span context %+v, want trace id %s", got, testTraceID)
			}
			if header.Get("Traceparent") == "" && got.valid {
				t.Errorf("a span context %+v without a traceparent", got)
			}
			if header.Get("Baggage") != got.baggage {
				t.Errorf("baggage %q, want %q", got.baggage, header.Get("Baggage"))
			}
		})
	}
}

// With the no-op provider, a request without trace-context headers does
// not pay for otelhttp; one with them does.
func TestTracingSkippedWithoutTraceContext(t *testing.T) {
	inner := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	tp := tracing.NewNoopTracerProvider()
	if !tracecontext.Noop(tp) {
		t.Fatal("component-base's no-op provider is not recognised")
	}
	allocs := func(h http.Handler, header http.Header) float64 {
		req := httptest.NewRequest(http.MethodGet, "/api/v1/namespaces/default/configmaps/c", nil)
		req.Header = header
		w := httptest.NewRecorder()
		return testing.AllocsPerRun(200, func() { h.ServeHTTP(w, req) })
	}
	plain := http.Header{"Accept": {"application/json"}}
	traced := http.Header{"Accept": {"application/json"}, "Traceparent": {testTraceparent}}
	if n := allocs(withTracing(inner, tp), plain); n != 0 {
		t.Errorf("%v allocations per request without trace context, want 0", n)
	}
	kube := allocs(genericapifilters.WithTracing(inner, tp), plain)
	if kube == 0 {
		t.Fatal("kube's tracing filter allocates nothing: the comparison means nothing")
	}
	if n := allocs(withTracing(inner, tp), traced); n < kube/2 {
		t.Errorf("%v allocations per request with a traceparent, kube's filter %v: the filter did not run", n, kube)
	}
	t.Logf("kube's tracing filter: %v allocations per request", kube)
}

// With a provider that records spans, every request goes through the
// tracing filter and kube's filter-latency spans, as in kube's chain.
func TestRecordingProviderTracesEveryRequest(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(t.Context()) })
	if tracecontext.Noop(tp) {
		t.Fatal("the SDK's provider is taken for a no-op one")
	}
	var mu sync.Mutex
	var handlerSpan trace.SpanContext
	build := func(h http.Handler, c *genericapiserver.Config, s *Signals) http.Handler {
		c.TracerProvider = tp
		return Build(h, c, s)
	}
	url, client, _ := serveChain(t, time.Minute, nil, build, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		handlerSpan = trace.SpanContextFromContext(r.Context())
		mu.Unlock()
	})
	resp, _ := get(t, client, url+"/api/v1/namespaces/default/configmaps/c")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	mu.Lock()
	defer mu.Unlock()
	if !handlerSpan.IsValid() {
		t.Error("a request without trace context has no span with a recording provider")
	}
	var names []string
	for _, s := range rec.Ended() {
		names = append(names, s.Name())
	}
	for _, want := range []string{"GET /api/v1/namespaces/{:namespace}/configmaps/{:name}", "authentication", "audit", "authorization"} {
		if !slices.Contains(names, want) {
			t.Errorf("no span %q; spans %v", want, names)
		}
	}
}
