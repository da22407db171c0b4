package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/go-logr/logr"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/meshplane/meshplane/webhook/internal/decision"
	"github.com/meshplane/meshplane/webhook/internal/review"
)

// RulesLister answers rules questions.
type RulesLister interface {
	Rules(ctx context.Context, b decision.Batcher, user string, groups []string, cluster, namespace string) (authorizationv1.SubjectRulesReviewStatus, error)
}

// RulesHandler serves /rules, the core's question behind a
// SelfSubjectRulesReview: a SubjectAccessReview (v1, JSON, at most 1 MiB)
// names the user, the logical cluster (spec.extra) and the namespace
// (spec.resourceAttributes.namespace); the answer is a
// SelfSubjectRulesReview whose status lists what OpenFGA grants.
func RulesHandler(l RulesLister, b decision.Batcher, log logr.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r, ok := readReview(w, req)
		if !ok {
			return
		}
		ns := ""
		if r.Spec.ResourceAttributes != nil {
			ns = r.Spec.ResourceAttributes.Namespace
		}
		status, err := l.Rules(req.Context(), b, r.Spec.User, r.Spec.Groups, r.Cluster(), ns)
		if err != nil {
			status.Incomplete, status.EvaluationError = true, err.Error()
		}
		log.V(4).Info("rules", "user", r.Spec.User, "cluster", r.Cluster(), "namespace", ns, "rules", decision.Describe(status))
		out, _ := json.Marshal(&authorizationv1.SelfSubjectRulesReview{
			TypeMeta: metav1.TypeMeta{APIVersion: "authorization.k8s.io/v1", Kind: "SelfSubjectRulesReview"},
			Spec:     authorizationv1.SelfSubjectRulesReviewSpec{Namespace: ns}, Status: status})
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(out)
	})
}

// readReview reads the SubjectAccessReview POSTed to one of the webhook's
// extra endpoints; when it cannot, it has answered (405, 413 or 400) and
// ok is false.
func readReview(w http.ResponseWriter, req *http.Request) (r review.Review, ok bool) {
	if req.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "POST a SubjectAccessReview", http.StatusMethodNotAllowed)
		return r, false
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, req.Body, review.MaxBodyBytes))
	if err != nil {
		code := http.StatusBadRequest
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			code = http.StatusRequestEntityTooLarge
		}
		http.Error(w, fmt.Sprintf("reading the review: %v", err), code)
		return r, false
	}
	r, err = review.Decode(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return r, false
	}
	return r, true
}
