package authorization

import (
	"context"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/meshplane/meshplane/core/internal/clusters"
)

// noBindings is a cluster that stores no RBAC objects.
type noBindings struct{}

func (noBindings) ListClusterRoleBindings(context.Context, string) ([]*rbacv1.ClusterRoleBinding, error) {
	return nil, nil
}

func (noBindings) ListRoleBindings(context.Context, string, string) ([]*rbacv1.RoleBinding, error) {
	return nil, nil
}

func (noBindings) GetClusterRole(_ context.Context, _, name string) (*rbacv1.ClusterRole, error) {
	return nil, apierrors.NewNotFound(schema.GroupResource{Group: "rbac.authorization.k8s.io", Resource: "clusterroles"}, name)
}

func (noBindings) GetRole(_ context.Context, _, _, name string) (*rbacv1.Role, error) {
	return nil, apierrors.NewNotFound(schema.GroupResource{Group: "rbac.authorization.k8s.io", Resource: "roles"}, name)
}

// The 403 a user reads carries RBAC's description of the request once,
// not once per RBAC source (bootstrap policy, the cluster's own objects).
func TestRefusalReasonSaysRBACOnce(t *testing.T) {
	authz, _ := New(noBindings{}, nil, Webhook{})
	ctx := clusters.WithCluster(context.Background(), "c1")
	attrs := authorizer.AttributesRecord{
		User:            &user.DefaultInfo{Name: "alice", Groups: []string{user.AllAuthenticated}},
		Verb:            "delete",
		APIGroup:        "core.platform-mesh.io",
		Resource:        "accounts",
		Name:            "acme",
		ResourceRequest: true,
	}
	decision, reason, err := authz.Authorize(ctx, attrs)
	if err != nil || decision == authorizer.DecisionAllow {
		t.Fatalf("Authorize = %v, %q, %v; want no allow and no error", decision, reason, err)
	}
	if n := strings.Count(reason, "RBAC: "); n != 1 {
		t.Errorf("reason names RBAC %d times, want once:\n%s", n, reason)
	}
	if !strings.Contains(reason, `cannot "delete" resource "accounts"`) {
		t.Errorf("reason %q does not describe the request", reason)
	}
}
