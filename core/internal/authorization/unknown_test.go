package authorization

import (
	"context"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/meshplane/meshplane/core/internal/clusters"
)

// someWorkspaces hold one Ready cluster, "known"; sharded: other shards
// are known.
type someWorkspaces struct{ synced, single bool }

func (someWorkspaces) Workspace(cluster string) (string, string, bool) {
	if cluster == "known" {
		return "Ready", "root:known", true
	}
	return "", "", false
}

func (s someWorkspaces) HasSynced() bool { return s.synced }

func (s someWorkspaces) Sharded() bool { return !s.single }

// adminsEverywhere binds cluster-admin to every authenticated user in every
// cluster.
type adminsEverywhere struct{ noBindings }

func (adminsEverywhere) ListClusterRoleBindings(context.Context, string) ([]*rbacv1.ClusterRoleBinding, error) {
	return []*rbacv1.ClusterRoleBinding{{ObjectMeta: metav1.ObjectMeta{Name: "all-admins"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: user.AllAuthenticated}}}}, nil
}

// Discovery in a cluster no shard holds is refused as kcp refuses it
// (LogicalCluster not found), but to system:masters, the system's
// identities and system: clusters, and while the index is not synced; a
// single core serves bare logical clusters as before.
func TestUnknownClusterClosed(t *testing.T) {
	alice := &user.DefaultInfo{Name: "alice", Groups: []string{user.AllAuthenticated}}
	admin := &user.DefaultInfo{Name: "admin", Groups: []string{user.SystemPrivilegedGroup, user.AllAuthenticated}}
	bootstrapper := &user.DefaultInfo{Name: "kb", Groups: []string{"system:kcp:workspace-bootstrapper", user.AllAuthenticated}}
	for _, tt := range []struct {
		name    string
		synced  bool
		single  bool
		cluster string
		who     user.Info
		want    authorizer.Decision
	}{
		{"alice in an unknown cluster", true, false, "nowhere", alice, authorizer.DecisionDeny},
		{"alice in a known cluster", true, false, "known", alice, authorizer.DecisionAllow},
		{"alice before the index synced", false, false, "nowhere", alice, authorizer.DecisionAllow},
		{"alice in a system: cluster", true, false, "system:admin", alice, authorizer.DecisionAllow},
		{"system:masters in an unknown cluster", true, false, "nowhere", admin, authorizer.DecisionAllow},
		{"a system identity in an unknown cluster", true, false, "nowhere", bootstrapper, authorizer.DecisionAllow},
		{"alice in a bare cluster of a single core", true, true, "nowhere", alice, authorizer.DecisionAllow},
	} {
		// Every cluster's RBAC grants alice everything, and the bootstrap
		// policy discovery (system:discovery for system:authenticated).
		authz, _ := New(adminsEverywhere{}, someWorkspaces{synced: tt.synced, single: tt.single}, Webhook{})
		ctx := clusters.WithCluster(context.Background(), tt.cluster)
		got, reason, _ := authz.Authorize(ctx, authorizer.AttributesRecord{User: tt.who, Verb: "get", Path: "/api"})
		if got != tt.want {
			t.Errorf("%s: GET /api decided %v (%s), want %v", tt.name, got, reason, tt.want)
		}
	}
}
