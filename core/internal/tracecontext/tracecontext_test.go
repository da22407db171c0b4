package tracecontext

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/baggage"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
	"k8s.io/component-base/tracing"
)

// headersSeen is a transport that records the trace headers of each call.
type headersSeen struct{ calls []http.Header }

func (h *headersSeen) RoundTrip(r *http.Request) (*http.Response, error) {
	h.calls = append(h.calls, http.Header{"Traceparent": r.Header.Values("Traceparent"), "Baggage": r.Header.Values("Baggage")})
	return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Request: r}, nil
}

func call(t *testing.T, rt http.RoundTripper, ctx context.Context) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "https://webhook.example/validate", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rt.RoundTrip(req); err != nil {
		t.Fatal(err)
	}
}

func TestNoop(t *testing.T) {
	for _, tp := range []trace.TracerProvider{tracing.NewNoopTracerProvider(), noop.NewTracerProvider()} {
		if !Noop(tp) {
			t.Errorf("%T is not taken for a no-op provider", tp)
		}
	}
	if Noop(sdktrace.NewTracerProvider()) {
		t.Error("the SDK's provider is taken for a no-op one")
	}
}

// With the no-op provider, a call made for a traced request carries its
// trace context and baggage (kube's wrapper injects them), one made for a
// request without goes out untouched, through the plain transport.
func TestForwardingWithNoopProvider(t *testing.T) {
	seen := &headersSeen{}
	rt := Forwarding(tracing.NewNoopTracerProvider())(seen)

	sc := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{0x4b, 0xf9, 0x2f, 0x35}, SpanID: trace.SpanID{0x00, 0xf0, 0x67}, TraceFlags: trace.FlagsSampled, Remote: true,
	})
	member, _ := baggage.NewMember("tenant", "acme")
	bag, _ := baggage.New(member)
	traced := baggage.ContextWithBaggage(trace.ContextWithRemoteSpanContext(context.Background(), sc), bag)
	onlyBaggage := baggage.ContextWithBaggage(context.Background(), bag)

	call(t, rt, traced)
	call(t, rt, onlyBaggage)
	call(t, rt, context.Background())
	if len(seen.calls) != 3 {
		t.Fatalf("%d calls, want 3", len(seen.calls))
	}
	if tp := seen.calls[0].Get("Traceparent"); !strings.Contains(tp, sc.TraceID().String()) {
		t.Errorf("traced call: traceparent %q, want trace id %s", tp, sc.TraceID())
	}
	if b := seen.calls[0].Get("Baggage"); b != "tenant=acme" {
		t.Errorf("traced call: baggage %q, want tenant=acme", b)
	}
	if tp, b := seen.calls[1].Get("Traceparent"), seen.calls[1].Get("Baggage"); tp != "" || b != "tenant=acme" {
		t.Errorf("baggage-only call: traceparent %q, baggage %q; want none and tenant=acme", tp, b)
	}
	if tp, b := seen.calls[2].Get("Traceparent"), seen.calls[2].Get("Baggage"); tp != "" || b != "" {
		t.Errorf("untraced call carried traceparent %q, baggage %q", tp, b)
	}
	plain := rt.(interface{ WrappedRoundTripper() http.RoundTripper }).WrappedRoundTripper()
	if plain != seen {
		t.Error("WrappedRoundTripper does not return the plain transport")
	}
	through := testing.AllocsPerRun(50, func() { call(t, rt, context.Background()) })
	direct := testing.AllocsPerRun(50, func() { call(t, seen, context.Background()) })
	if through != direct {
		t.Errorf("%v allocations per untraced call, %v without the wrapper: want no otelhttp", through, direct)
	}
	if n := testing.AllocsPerRun(50, func() { call(t, rt, traced) }); n <= direct {
		t.Errorf("%v allocations per traced call, %v without the wrapper: otelhttp did not run", n, direct)
	}
}

// With a recording provider every call goes through kube's wrapper: one
// without trace context gets a new span's.
func TestForwardingWithRecordingProvider(t *testing.T) {
	tp := sdktrace.NewTracerProvider()
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	seen := &headersSeen{}
	call(t, Forwarding(tp)(seen), context.Background())
	if len(seen.calls) != 1 || seen.calls[0].Get("Traceparent") == "" {
		t.Errorf("calls %v, want one with a traceparent", seen.calls)
	}
}
