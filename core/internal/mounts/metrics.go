package mounts

import (
	"net/http"
	"strconv"
	"time"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

// Requests to mounted workspaces are not seen by the API handlers'
// metrics (they never reach them): these count them, on /metrics.
var (
	requestsTotal = metrics.NewCounterVec(&metrics.CounterOpts{
		Namespace: "meshplane", Subsystem: "mount", Name: "requests_total",
		Help:           "Requests to mounted workspaces, by HTTP code (503: the mount was not Ready or not reachable).",
		StabilityLevel: metrics.ALPHA,
	}, []string{"code"})
	requestDuration = metrics.NewHistogram(&metrics.HistogramOpts{
		Namespace: "meshplane", Subsystem: "mount", Name: "request_duration_seconds",
		Help:           "Time to serve a request to a mounted workspace after authorization (to the end of the response; watches included).",
		Buckets:        metrics.ExponentialBuckets(0.0005, 2, 16),
		StabilityLevel: metrics.ALPHA,
	})
)

func init() {
	legacyregistry.MustRegister(requestsTotal, requestDuration)
}

// statusWriter records the status code; Unwrap keeps flushing and
// hijacking (watches, upgrades) working through http.ResponseController.
type statusWriter struct {
	http.ResponseWriter
	code int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// instrument records one request's code and duration.
func instrument(w http.ResponseWriter, serve func(http.ResponseWriter)) {
	start := time.Now()
	sw := &statusWriter{ResponseWriter: w}
	serve(sw)
	requestsTotal.WithLabelValues(strconv.Itoa(sw.code)).Inc()
	requestDuration.Observe(time.Since(start).Seconds())
}
