package handlerchain

import (
	"context"
	"net/http"
	"time"

	"go.opentelemetry.io/otel/trace"
	"k8s.io/apiserver/pkg/endpoints/filterlatency"
	"k8s.io/apiserver/pkg/endpoints/metrics"
	"k8s.io/apiserver/pkg/server/httplog"
	"k8s.io/klog/v2"

	"github.com/meshplane/meshplane/core/internal/tracecontext"
)

// filterLatency measures how long each tracked filter takes, as kube's
// filterlatency package does: TrackStarted before a filter, TrackCompleted
// after it (in front of the next handler and of the filter's failure
// handler). The durations go to kube's histogram
// apiserver_request_filter_duration_seconds{filter} (metrics.
// RecordFilterLatency, registered with the other endpoint metrics) and,
// above 100 ms at -v=3, to the request's HTTP log line as fl_<filter>.
//
// With a tracer provider that records spans, kube's own functions are
// used: they also start a span per filter. With a no-op provider those
// spans are nothing, and kube's TrackStarted still copies the request
// (Request.WithContext) at every tracked filter; here one record per
// request, added to the context by the first tracked filter, is updated
// in place by the next ones (kube mutates its record the same way).
type filterLatency struct {
	tp trace.TracerProvider
}

// filterRecord is the tracked filter running and when it started.
type filterRecord struct {
	name    string
	started time.Time
}

type filterRecordKey struct{}

// minFilterLatencyToLog is kube's threshold for the HTTP log's fl_ entry.
const minFilterLatencyToLog = 100 * time.Millisecond

// started marks the start of the filter named name, which h begins with.
func (f filterLatency) started(h http.Handler, name string) http.Handler {
	if !tracecontext.Noop(f.tp) {
		return filterlatency.TrackStarted(h, f.tp, name)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if fr, ok := r.Context().Value(filterRecordKey{}).(*filterRecord); ok {
			fr.name, fr.started = name, time.Now()
			h.ServeHTTP(w, r)
			return
		}
		fr := &filterRecord{name: name, started: time.Now()}
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), filterRecordKey{}, fr)))
	})
}

// completed records the duration of the filter that calls h.
func (f filterLatency) completed(h http.Handler) http.Handler {
	if !tracecontext.Noop(f.tp) {
		return filterlatency.TrackCompleted(h)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		now := time.Now()
		ctx := r.Context()
		if fr, ok := ctx.Value(filterRecordKey{}).(*filterRecord); ok {
			latency := now.Sub(fr.started)
			metrics.RecordFilterLatency(ctx, fr.name, latency)
			if latency > minFilterLatencyToLog && klog.V(3).Enabled() {
				httplog.AddKeyValue(ctx, "fl_"+fr.name, latency.String())
			}
		}
		h.ServeHTTP(w, r)
	})
}
