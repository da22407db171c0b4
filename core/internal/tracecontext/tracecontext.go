// Package tracecontext tells what tracing does with the core's tracer
// provider, and forwards a request's W3C trace context (kube's
// propagators: traceparent, tracestate, baggage) to the calls made for it.
// The core configures no tracing: its provider is component-base's no-op
// one, whose tracers start no spans but pass on a span context already in
// a request's context (OpenTelemetry's pass-through behaviour, which
// kube-apiserver relies on too).
package tracecontext

import (
	"context"
	"net/http"
	"reflect"

	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
	"k8s.io/client-go/transport"
	"k8s.io/component-base/tracing"
)

// noopProviderType is the type of component-base's no-op tracer provider,
// genericapiserver.NewConfig's default (unexported, so compared by type).
var noopProviderType = reflect.TypeOf(tracing.NewNoopTracerProvider())

// Noop reports whether tp records nothing: component-base's or
// OpenTelemetry's no-op provider.
func Noop(tp trace.TracerProvider) bool {
	switch tp.(type) {
	case noop.TracerProvider, *noop.TracerProvider:
		return true
	}
	return reflect.TypeOf(tp) == noopProviderType
}

// InContext reports whether ctx carries something kube's propagators
// would inject into an outgoing call: a valid span context or baggage.
func InContext(ctx context.Context) bool {
	return trace.SpanContextFromContext(ctx).IsValid() || baggage.FromContext(ctx).Len() > 0
}

// Forwarding is kube's tracing.WrapperFor(tp), which webhook clients'
// transports are wrapped with in kube-apiserver: calls carry the trace
// context of the request they are made for. With a no-op provider the
// otelhttp transport only injects that context, so calls whose context
// carries none go to rt directly.
func Forwarding(tp trace.TracerProvider) transport.WrapperFunc {
	wrap := tracing.WrapperFor(tp)
	if !Noop(tp) {
		return wrap
	}
	return func(rt http.RoundTripper) http.RoundTripper {
		return &forwarding{traced: wrap(rt), plain: rt}
	}
}

type forwarding struct {
	traced, plain http.RoundTripper
}

func (f *forwarding) RoundTrip(r *http.Request) (*http.Response, error) {
	if InContext(r.Context()) {
		return f.traced.RoundTrip(r)
	}
	return f.plain.RoundTrip(r)
}

// WrappedRoundTripper lets client-go's transport helpers see through.
func (f *forwarding) WrappedRoundTripper() http.RoundTripper { return f.plain }
