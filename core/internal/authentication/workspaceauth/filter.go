package workspaceauth

import (
	"errors"
	"strings"

	"k8s.io/apiserver/pkg/authentication/user"
)

// Extras kcp adds to a user authenticated by a workspace type's issuer:
// the user is scoped to the logical cluster it was authenticated for.
const (
	ScopesExtra      = "authentication.kcp.io/scopes"
	ClusterNameExtra = "authentication.kcp.io/cluster-name"
)

var errSystemUser = errors.New("system usernames are not admitted")

// scope applies kcp's rules to a user of a workspace type's issuer: a
// system: username is refused, system: groups and extras whose key
// contains kcp.io are dropped (an issuer of one organisation never
// yields a system identity), then system:authenticated and the cluster
// scope are added.
func scope(u user.Info, cluster string) (user.Info, error) {
	if strings.HasPrefix(u.GetName(), "system:") {
		return nil, errSystemUser
	}
	groups := make([]string, 0, len(u.GetGroups())+1)
	for _, g := range u.GetGroups() {
		if !strings.HasPrefix(g, "system:") {
			groups = append(groups, g)
		}
	}
	groups = append(groups, user.AllAuthenticated)
	extra := map[string][]string{}
	for k, v := range u.GetExtra() {
		if !strings.Contains(k, "kcp.io") {
			extra[k] = v
		}
	}
	extra[ScopesExtra] = []string{"cluster:" + cluster}
	extra[ClusterNameExtra] = []string{cluster}
	return &user.DefaultInfo{Name: u.GetName(), UID: u.GetUID(), Groups: groups, Extra: extra}, nil
}
