package server

import (
	"context"

	rbacv1 "k8s.io/api/rbac/v1"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/meshplane/meshplane/core/internal/authorization/rbac"
	"github.com/meshplane/meshplane/core/internal/clusters"
	"github.com/meshplane/meshplane/core/internal/registry/builtin"
)

// rbacSource reads each cluster's RBAC objects from the registries, for
// the authorizer: the adapter that keeps registries from knowing it. It
// reads the watch caches (resourceVersion 0, as kube-apiserver's RBAC reads
// its informers): a new binding or role counts once the cache has it,
// milliseconds after the write, and no request costs an etcd read.
func rbacSource(s builtin.Storage) rbac.RuleSource {
	gv := rbacv1.SchemeGroupVersion
	return &storedRBAC{
		crb: s[gv]["clusterrolebindings"].(rest.Lister),
		rb:  s[gv]["rolebindings"].(rest.Lister),
		cr:  s[gv]["clusterroles"].(rest.Getter),
		r:   s[gv]["roles"].(rest.Getter),
	}
}

type storedRBAC struct {
	crb, rb rest.Lister
	cr, r   rest.Getter
}

func scoped(ctx context.Context, cluster, namespace string) context.Context {
	ctx = clusters.WithCluster(ctx, cluster)
	return genericapirequest.WithNamespace(ctx, namespace)
}

func (s *storedRBAC) ListClusterRoleBindings(ctx context.Context, cluster string) ([]*rbacv1.ClusterRoleBinding, error) {
	obj, err := s.crb.List(scoped(ctx, cluster, ""), &metainternalversion.ListOptions{ResourceVersion: "0"})
	if err != nil {
		return nil, err
	}
	items := obj.(*rbacv1.ClusterRoleBindingList).Items
	out := make([]*rbacv1.ClusterRoleBinding, len(items))
	for i := range items {
		out[i] = &items[i]
	}
	return out, nil
}

func (s *storedRBAC) ListRoleBindings(ctx context.Context, cluster, namespace string) ([]*rbacv1.RoleBinding, error) {
	obj, err := s.rb.List(scoped(ctx, cluster, namespace), &metainternalversion.ListOptions{ResourceVersion: "0"})
	if err != nil {
		return nil, err
	}
	items := obj.(*rbacv1.RoleBindingList).Items
	out := make([]*rbacv1.RoleBinding, len(items))
	for i := range items {
		out[i] = &items[i]
	}
	return out, nil
}

func (s *storedRBAC) GetClusterRole(ctx context.Context, cluster, name string) (*rbacv1.ClusterRole, error) {
	obj, err := s.cr.Get(scoped(ctx, cluster, ""), name, &metav1.GetOptions{ResourceVersion: "0"})
	if err != nil {
		return nil, err
	}
	return obj.(*rbacv1.ClusterRole), nil
}

func (s *storedRBAC) GetRole(ctx context.Context, cluster, namespace, name string) (*rbacv1.Role, error) {
	obj, err := s.r.Get(scoped(ctx, cluster, namespace), name, &metav1.GetOptions{ResourceVersion: "0"})
	if err != nil {
		return nil, err
	}
	return obj.(*rbacv1.Role), nil
}
