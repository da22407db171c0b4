package handlerchain

import (
	"net/http"
	"net/textproto"

	"go.opentelemetry.io/otel/trace"
	genericapifilters "k8s.io/apiserver/pkg/endpoints/filters"
	"k8s.io/component-base/tracing"

	"github.com/meshplane/meshplane/core/internal/tracecontext"
)

// withTracing is kube's tracing filter (otelhttp), applied to every
// request when tp records spans. With a no-op provider all the filter does
// is extract an incoming trace context (kube's propagators: W3C
// traceparent/tracestate and baggage) into the request's context, for
// whatever reads or propagates it further; a request without those
// headers leaves it with no span context either way, so only requests
// that carry one of the propagators' headers go through the filter (it
// costs some 40 allocations per request).
func withTracing(h http.Handler, tp trace.TracerProvider) http.Handler {
	traced := genericapifilters.WithTracing(h, tp)
	if !tracecontext.Noop(tp) {
		return traced
	}
	var headers []string
	for _, f := range tracing.Propagators().Fields() {
		headers = append(headers, textproto.CanonicalMIMEHeaderKey(f))
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, k := range headers {
			if len(r.Header[k]) > 0 {
				traced.ServeHTTP(w, r)
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}
