// Package metrics are the webhook's Prometheus metrics: reviews by result,
// decision-cache hits and misses, and latencies of reviews and of
// OpenFGA's answers.
package metrics

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics of one webhook.
type Metrics struct {
	Registry *prometheus.Registry
	// Reviews counts answered reviews by result: allowed, no_opinion,
	// retry (503, the cluster is not known yet), error (OpenFGA failed),
	// bad_request.
	Reviews *prometheus.CounterVec
	// Cache counts decision-cache lookups by result: hit or miss.
	Cache *prometheus.CounterVec
	// ReviewSeconds is the time to answer a review, by cache result (hit,
	// miss, none when no Check was needed).
	ReviewSeconds *prometheus.HistogramVec
	// OpenFGASeconds is the time of OpenFGA calls, by call (check,
	// read_models, list_objects).
	OpenFGASeconds *prometheus.HistogramVec
	// Clusters is the number of account workspaces known.
	Clusters prometheus.GaugeFunc
}

// Latency buckets from 50 µs to 2.5 s.
var buckets = []float64{.00005, .0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5}

// New registers the metrics; clusters reports the number of known
// workspaces.
func New(clusters func() float64) *Metrics {
	m := &Metrics{
		Registry: prometheus.NewRegistry(),
		Reviews: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rebac_authz_reviews_total",
			Help: "SubjectAccessReviews answered, by result."}, []string{"result"}),
		Cache: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rebac_authz_decision_cache_total",
			Help: "Decision cache lookups, by result (hit, miss); the hit rate is hit / (hit + miss)."}, []string{"result"}),
		ReviewSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "rebac_authz_review_duration_seconds",
			Help: "Time to answer a SubjectAccessReview, by decision cache result.", Buckets: buckets}, []string{"cache"}),
		OpenFGASeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "rebac_authz_openfga_request_duration_seconds",
			Help: "Time of OpenFGA calls, by call.", Buckets: buckets}, []string{"call"}),
		Clusters: prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "rebac_authz_clusters",
			Help: "Account workspaces known."}, clusters),
	}
	m.Registry.MustRegister(m.Reviews, m.Cache, m.ReviewSeconds, m.OpenFGASeconds, m.Clusters,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Handler serves /metrics.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{})
}
