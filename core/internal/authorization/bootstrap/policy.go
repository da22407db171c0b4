// Package bootstrap holds the RBAC policy every logical cluster has without
// storing it: the roles kube-apiserver bootstraps that matter here, and the
// bindings that give kcp admins and authenticated users their base rights.
// A cluster's own objects of the same name take precedence.
package bootstrap

import (
	"context"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/user"

	"github.com/meshplane/meshplane/core/internal/clusters"
)

// KCPAdminGroup is the group of kcp's admin user.
const KCPAdminGroup = "system:kcp:admin"

func clusterRole(name string, rules ...rbacv1.PolicyRule) *rbacv1.ClusterRole {
	return &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name,
		Labels: map[string]string{"kubernetes.io/bootstrapping": "rbac-defaults"}}, Rules: rules}
}

func binding(role string, groups ...string) *rbacv1.ClusterRoleBinding {
	b := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: role},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role}}
	for _, g := range groups {
		b.Subjects = append(b.Subjects, rbacv1.Subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: g})
	}
	return b
}

var read = []string{"get", "list", "watch"}

// ClusterRoles are the bootstrap roles, by name.
var ClusterRoles = map[string]*rbacv1.ClusterRole{}

// ClusterRoleBindings are the bootstrap bindings.
var ClusterRoleBindings []*rbacv1.ClusterRoleBinding

func init() {
	for _, r := range []*rbacv1.ClusterRole{
		clusterRole("cluster-admin",
			rbacv1.PolicyRule{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}},
			rbacv1.PolicyRule{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}}),
		clusterRole("system:discovery", rbacv1.PolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{
			"/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez", "/openapi", "/openapi/*", "/readyz",
			"/version", "/version/"}}),
		clusterRole("system:basic-user", rbacv1.PolicyRule{Verbs: []string{"create"},
			APIGroups: []string{"authorization.k8s.io"}, Resources: []string{"selfsubjectaccessreviews", "selfsubjectrulesreviews"}},
			rbacv1.PolicyRule{Verbs: []string{"create"}, APIGroups: []string{"authentication.k8s.io"}, Resources: []string{"selfsubjectreviews"}}),
		clusterRole("system:public-info-viewer", rbacv1.PolicyRule{Verbs: []string{"get"},
			NonResourceURLs: []string{"/healthz", "/livez", "/readyz", "/version", "/version/"}}),
		clusterRole("system:kcp:workspacetypes:use", rbacv1.PolicyRule{Verbs: []string{"use"},
			APIGroups: []string{"tenancy.kcp.io"}, Resources: []string{"workspacetypes"}, ResourceNames: []string{"universal", "team"}}),
		clusterRole("system:kcp:workspace:access", rbacv1.PolicyRule{Verbs: []string{"access"}, NonResourceURLs: []string{"/"}}),
		clusterRole("admin", rbacv1.PolicyRule{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}}),
		clusterRole("edit", rbacv1.PolicyRule{Verbs: []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"},
			APIGroups: []string{"", "coordination.k8s.io", "events.k8s.io"},
			Resources: []string{"configmaps", "secrets", "serviceaccounts", "events", "leases", "limitranges", "resourcequotas"}}),
		clusterRole("view", rbacv1.PolicyRule{Verbs: read, APIGroups: []string{"", "coordination.k8s.io", "events.k8s.io"},
			Resources: []string{"configmaps", "serviceaccounts", "events", "leases", "limitranges", "resourcequotas", "namespaces"}}),
	} {
		ClusterRoles[r.Name] = r
	}
	ClusterRoleBindings = []*rbacv1.ClusterRoleBinding{
		binding("cluster-admin", KCPAdminGroup),
		binding("system:discovery", user.AllAuthenticated),
		binding("system:basic-user", user.AllAuthenticated),
		binding("system:public-info-viewer", user.AllAuthenticated, user.AllUnauthenticated),
	}
	rootBindings = append(ClusterRoleBindings[:len(ClusterRoleBindings):len(ClusterRoleBindings)],
		binding("system:kcp:workspacetypes:use", user.AllAuthenticated))
}

// rootBindings are ClusterRoleBindings and, in root only, the use of
// root's universal and team workspace types (the check is asked where the
// type is): elsewhere a type of those names is nobody's to use by default,
// and a SelfSubjectRulesReview lists kcp's default rules only.
var rootBindings []*rbacv1.ClusterRoleBinding

// Source serves the bootstrap policy in every cluster; it satisfies
// rbac.RuleSource.
type Source struct{}

func (Source) ListClusterRoleBindings(ctx context.Context, cluster string) ([]*rbacv1.ClusterRoleBinding, error) {
	if cluster == clusters.Root {
		return rootBindings, nil
	}
	return ClusterRoleBindings, nil
}

func (Source) ListRoleBindings(ctx context.Context, cluster, namespace string) ([]*rbacv1.RoleBinding, error) {
	return nil, nil
}

func (Source) GetClusterRole(ctx context.Context, cluster, name string) (*rbacv1.ClusterRole, error) {
	if r, ok := ClusterRoles[name]; ok {
		return r, nil
	}
	return nil, apierrors.NewNotFound(rbacv1.Resource("clusterroles"), name)
}

func (Source) GetRole(ctx context.Context, cluster, namespace, name string) (*rbacv1.Role, error) {
	return nil, apierrors.NewNotFound(rbacv1.Resource("roles"), name)
}
