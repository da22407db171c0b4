package rbac

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apiserver/pkg/authentication/user"
)

// Keys of the user's extra that kcp's RBAC reads.
const (
	// ScopeExtraKey limits a user to logical clusters: each value is a
	// comma-separated list of "cluster:<name>"; outside them the user is
	// only authenticated (impersonated users get one, see
	// authentication.WithImpersonationScope).
	ScopeExtraKey = "authentication.kcp.io/scopes"
	// WarrantExtraKey holds warrants, JSON users whose permissions the
	// user has too (within their own scopes).
	WarrantExtraKey = "authorization.kcp.io/warrant"
	// ClusterExtraKey names the logical cluster of a service account.
	ClusterExtraKey = "authentication.kubernetes.io/cluster-name"
	// GlobalServiceAccountPrefix names a service account across clusters:
	// system:kcp:serviceaccount:<cluster>:<namespace>:<name>.
	GlobalServiceAccountPrefix = "system:kcp:serviceaccount:"
)

// Warrant is the value of a warrant extra.
type Warrant struct {
	User   string              `json:"user"`
	UID    string              `json:"uid,omitempty"`
	Groups []string            `json:"groups,omitempty"`
	Extra  map[string][]string `json:"extra,omitempty"`
}

var unauthenticated = &user.DefaultInfo{Name: user.Anonymous, Groups: []string{user.AllUnauthenticated}}

// ClusterGroupPrefix prefixes the group kcp gives, in other clusters, the
// identities of a logical cluster (system:cluster:<cluster>).
const ClusterGroupPrefix = "system:cluster:"

// originClusters returns the clusters an identity belongs to: a service
// account's cluster, or the clusters its scopes name (all scopes must name
// one).
func originClusters(u user.Info) []string {
	extra := u.GetExtra()
	if isServiceAccount(u) {
		if c := extra[ClusterExtraKey]; len(c) == 1 {
			return c
		}
		return nil
	}
	var out []string
	for i, scopes := range extra[ScopeExtraKey] {
		var these []string
		for _, s := range strings.Split(scopes, ",") {
			if c, ok := strings.CutPrefix(strings.TrimSpace(s), "cluster:"); ok && c != "" {
				these = append(these, c)
			}
		}
		if i == 0 {
			out = these
			continue
		}
		out = slices.DeleteFunc(out, func(c string) bool { return !slices.Contains(these, c) })
	}
	return out
}

// EffectiveUsers returns whom RBAC in cluster sees in u, as kcp's RBAC:
// u itself when it is in scope there (a service account of another
// cluster, or a user whose scopes leave the cluster out, is only
// authenticated); a service account also as its global name
// system:kcp:serviceaccount:<its cluster>:<namespace>:<name> (so bindings
// in other clusters can name it); and, recursively, its warrants (a
// service account warrant must name its cluster).
func EffectiveUsers(cluster string, u user.Info) []user.Info {
	if extra := u.GetExtra(); !isServiceAccount(u) && len(extra[ScopeExtraKey]) == 0 && len(extra[WarrantExtraKey]) == 0 {
		return []user.Info{u} // the common case: the user as it is
	}
	var out []user.Info
	wantAuthenticated, wantUnauthenticated := false, false
	var origins []string
	var visit func(u user.Info, depth int)
	visit = func(u user.Info, depth int) {
		if inScope(u, cluster) {
			out = append(out, u)
		} else if hasGroup(u, user.AllAuthenticated) {
			wantAuthenticated = true
			for _, c := range originClusters(u) {
				if !slices.Contains(origins, c) {
					origins = append(origins, c)
				}
			}
		} else {
			wantUnauthenticated = true
		}
		if isServiceAccount(u) {
			if c := u.GetExtra()[ClusterExtraKey]; len(c) == 1 {
				global := &user.DefaultInfo{Name: GlobalServiceAccountName(c[0], u.GetName()), Extra: u.GetExtra()}
				if hasGroup(u, user.AllAuthenticated) {
					global.Groups = []string{user.AllAuthenticated}
				}
				out = append(out, global)
			}
		}
		if depth > 8 {
			return // warrants of warrants, bounded
		}
		for _, v := range u.GetExtra()[WarrantExtraKey] {
			var w Warrant
			if err := json.Unmarshal([]byte(v), &w); err != nil {
				continue
			}
			wu := &user.DefaultInfo{Name: w.User, UID: w.UID, Groups: w.Groups, Extra: w.Extra}
			if isServiceAccount(wu) && len(w.Extra[ClusterExtraKey]) == 0 {
				continue // warrants must be scoped to a cluster
			}
			visit(wu, depth+1)
		}
	}
	visit(u, 0)
	if wantAuthenticated {
		// As kcp: an identity of other clusters is anonymous here, in
		// system:authenticated and system:cluster:<cluster> of each cluster
		// it comes from, so bindings can name all identities of a workspace.
		a := &user.DefaultInfo{Name: user.Anonymous, Groups: []string{user.AllAuthenticated}}
		for _, c := range origins {
			a.Groups = append(a.Groups, ClusterGroupPrefix+c)
		}
		out = append(out, a)
	}
	if wantUnauthenticated {
		out = append(out, unauthenticated)
	}
	return out
}

// GlobalServiceAccountName is the global name of service account
// system:serviceaccount:<namespace>:<name> of cluster.
func GlobalServiceAccountName(cluster, name string) string {
	return fmt.Sprintf("%s%s:%s", GlobalServiceAccountPrefix, cluster, strings.TrimPrefix(name, serviceAccountPrefix))
}

// inScope reports whether u acts as itself in cluster.
func inScope(u user.Info, cluster string) bool {
	if isServiceAccount(u) {
		if c := u.GetExtra()[ClusterExtraKey]; len(c) > 1 || (len(c) == 1 && c[0] != cluster) {
			return false // a service account of another cluster
		}
	}
	for _, scopes := range u.GetExtra()[ScopeExtraKey] {
		found := false
		for _, s := range strings.Split(scopes, ",") {
			if strings.TrimPrefix(s, "cluster:") == cluster && strings.HasPrefix(s, "cluster:") {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

func isServiceAccount(u user.Info) bool { return strings.HasPrefix(u.GetName(), serviceAccountPrefix) }

func hasGroup(u user.Info, group string) bool {
	for _, g := range u.GetGroups() {
		if g == group {
			return true
		}
	}
	return false
}
