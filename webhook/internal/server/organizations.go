package server

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/go-logr/logr"

	"github.com/meshplane/meshplane/webhook/internal/myorgs"
)

// MaxOrganizations bounds one answer of /organizations.
const MaxOrganizations = 1000

// OrganizationsLister answers which organizations a user has a role in.
type OrganizationsLister interface {
	Organizations(ctx context.Context, idx *myorgs.Index, user string, groups []string, limit int) ([]string, bool, error)
}

// Organizations is the answer of /organizations (a Meshplane extension
// the core's "myorgs" virtual workspace asks).
type Organizations struct {
	Kind          string   `json:"kind"`
	APIVersion    string   `json:"apiVersion"`
	Organizations []string `json:"organizations"`
	// Truncated: the user has more candidates than MaxOrganizations.
	Truncated bool `json:"truncated,omitempty"`
}

// OrganizationsHandler serves /organizations: a SubjectAccessReview (v1 or
// v1beta1, JSON) names the user and groups; the answer lists the
// organizations whose Account in root:orgs the user may read, the same
// answer a read of each by name gets. 503 while the account workspaces
// are being read, 502 when root:orgs cannot be read.
func OrganizationsHandler(l OrganizationsLister, idx *myorgs.Index, synced func() bool, log logr.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r, ok := readReview(w, req)
		if !ok {
			return
		}
		if r.Spec.User == "" {
			http.Error(w, "the review names no user", http.StatusBadRequest)
			return
		}
		if !synced() {
			w.Header().Set("Retry-After", "1")
			http.Error(w, "the account workspaces are being read", http.StatusServiceUnavailable)
			return
		}
		names, truncated, err := l.Organizations(req.Context(), idx, r.Spec.User, r.Spec.Groups, MaxOrganizations)
		if err != nil {
			http.Error(w, "reading the organizations: "+err.Error(), http.StatusBadGateway)
			return
		}
		if names == nil {
			names = []string{}
		}
		log.V(4).Info("organizations", "user", r.Spec.User, "count", len(names), "truncated", truncated)
		out, _ := json.Marshal(&Organizations{Kind: "OrganizationList", APIVersion: "rebac.meshplane.io/v1alpha1", Organizations: names, Truncated: truncated})
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(out)
	})
}
