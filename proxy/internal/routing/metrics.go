package routing

import "github.com/prometheus/client_golang/prometheus"

var (
	requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "meshplane_front_proxy_requests_total",
		Help: "Requests answered by the front proxy, by shard (empty: answered by the proxy) and HTTP code.",
	}, []string{"shard", "code"})
	duration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "meshplane_front_proxy_request_duration_seconds",
		Help:    "Time to answer requests sent on to a shard (watches: until they end).",
		Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16),
	}, []string{"shard"})
)

// Register adds the proxy's metrics to r.
func Register(r prometheus.Registerer) {
	r.MustRegister(requests, duration)
}
