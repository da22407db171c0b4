package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/go-logr/logr"
	authorizationv1 "k8s.io/api/authorization/v1"

	"github.com/meshplane/meshplane/webhook/internal/decision"
	"github.com/meshplane/meshplane/webhook/internal/metrics"
	"github.com/meshplane/meshplane/webhook/internal/review"
)

// Decider answers reviews.
type Decider interface {
	Decide(ctx context.Context, r review.Review) decision.Result
}

// AuthzHandler serves /authz: a SubjectAccessReview (v1 or v1beta1, JSON,
// at most review.MaxBodyBytes) in, the same kind and version out. A 503
// with Retry-After asks the apiserver to ask again later.
func AuthzHandler(d Decider, m *metrics.Metrics, log logr.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		start := time.Now()
		if req.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			http.Error(w, "POST a SubjectAccessReview", http.StatusMethodNotAllowed)
			m.Reviews.WithLabelValues("bad_request").Inc()
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, req.Body, review.MaxBodyBytes))
		if err != nil {
			code := http.StatusBadRequest
			var tooLarge *http.MaxBytesError
			if errors.As(err, &tooLarge) {
				code = http.StatusRequestEntityTooLarge
			}
			http.Error(w, fmt.Sprintf("reading the review: %v", err), code)
			m.Reviews.WithLabelValues("bad_request").Inc()
			return
		}
		r, err := review.Decode(body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			m.Reviews.WithLabelValues("bad_request").Inc()
			return
		}
		res := d.Decide(req.Context(), r)
		if res.RetryAfter > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(int((res.RetryAfter+time.Second-1)/time.Second)))
			http.Error(w, res.Status.Reason, http.StatusServiceUnavailable)
			m.Reviews.WithLabelValues("retry").Inc()
			return
		}
		out, err := review.Encode(r.APIVersion, res.Status)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(out)
		m.Reviews.WithLabelValues(resultOf(res.Status)).Inc()
		m.ReviewSeconds.WithLabelValues(res.Cache).Observe(time.Since(start).Seconds())
		if log.V(4).Enabled() {
			log.V(4).Info("review", "user", r.Spec.User, "cluster", r.Cluster(), "allowed", res.Status.Allowed, "reason", res.Status.Reason)
		}
	})
}

func resultOf(s authorizationv1.SubjectAccessReviewStatus) string {
	switch {
	case s.Allowed:
		return "allowed"
	case s.EvaluationError != "":
		return "error"
	default:
		return "no_opinion"
	}
}
