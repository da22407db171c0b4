package server

import (
	"errors"
	"fmt"

	apisv1alpha1 "github.com/kcp-dev/sdk/apis/apis/v1alpha1"
	apisv1alpha2 "github.com/kcp-dev/sdk/apis/apis/v1alpha2"
	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/meshplane/meshplane/core/pkg/controllers/namespace"
	"github.com/meshplane/meshplane/core/pkg/registry/builtin"
	"github.com/meshplane/meshplane/core/pkg/registry/local"
	"github.com/meshplane/meshplane/core/pkg/tenancy"
)

// registries are the in-process clients of the built-in resources the
// server's own code reads and writes (see reconciler/client for why in
// process).
type registries struct {
	logicalClusters     local.Client[*corev1alpha1.LogicalCluster]
	workspaces          local.Client[*tenancyv1alpha1.Workspace]
	workspaceTypes      local.Client[*tenancyv1alpha1.WorkspaceType]
	namespaces          local.Client[*corev1.Namespace]
	secrets             local.Client[*corev1.Secret]
	clusterRoleBindings local.Client[*rbacv1.ClusterRoleBinding]
	exports             local.Client[*apisv1alpha2.APIExport]
	bindings            local.Client[*apisv1alpha2.APIBinding]
	schemas             local.Client[*apisv1alpha1.APIResourceSchema]
	slices              local.Client[*apisv1alpha1.APIExportEndpointSlice]

	// namespaceStore and namespaceFinalize serve the namespace controller
	// and namespace admission.
	namespaceStore    namespace.Namespaces
	namespaceFinalize rest.Updater
}

// newRegistries looks the clients up; a resource missing from storage is
// an error at start-up, not a panic later.
func newRegistries(s builtin.Storage) (*registries, error) {
	r := &registries{}
	var errs []error
	lookup := func(gv schema.GroupVersion, resource string) (local.Storage, rest.Updater) {
		st, ok := s[gv][resource].(local.Storage)
		if !ok {
			errs = append(errs, fmt.Errorf("no registry for %s %s", gv, resource))
		}
		status, _ := s[gv][resource+"/status"].(rest.Updater)
		return st, status
	}
	r.logicalClusters = clientOf[*corev1alpha1.LogicalCluster](lookup(corev1alpha1.SchemeGroupVersion, "logicalclusters"))
	r.workspaces = clientOf[*tenancyv1alpha1.Workspace](lookup(tenancyv1alpha1.SchemeGroupVersion, "workspaces"))
	r.workspaceTypes = clientOf[*tenancyv1alpha1.WorkspaceType](lookup(tenancyv1alpha1.SchemeGroupVersion, "workspacetypes"))
	r.namespaces = clientOf[*corev1.Namespace](lookup(corev1.SchemeGroupVersion, "namespaces"))
	r.secrets = clientOf[*corev1.Secret](lookup(corev1.SchemeGroupVersion, "secrets"))
	r.clusterRoleBindings = clientOf[*rbacv1.ClusterRoleBinding](lookup(rbacv1.SchemeGroupVersion, "clusterrolebindings"))
	r.exports = clientOf[*apisv1alpha2.APIExport](lookup(apisv1alpha2.SchemeGroupVersion, "apiexports"))
	r.bindings = clientOf[*apisv1alpha2.APIBinding](lookup(apisv1alpha2.SchemeGroupVersion, "apibindings"))
	r.schemas = clientOf[*apisv1alpha1.APIResourceSchema](lookup(apisv1alpha1.SchemeGroupVersion, "apiresourceschemas"))
	r.slices = clientOf[*apisv1alpha1.APIExportEndpointSlice](lookup(apisv1alpha1.SchemeGroupVersion, "apiexportendpointslices"))
	var ok bool
	if r.namespaceStore, ok = s[corev1.SchemeGroupVersion]["namespaces"].(namespace.Namespaces); !ok {
		errs = append(errs, fmt.Errorf("no registry for namespaces"))
	}
	if r.namespaceFinalize, ok = s[corev1.SchemeGroupVersion]["namespaces/finalize"].(rest.Updater); !ok {
		errs = append(errs, fmt.Errorf("no registry for namespaces/finalize"))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return r, nil
}

func clientOf[T runtime.Object](st local.Storage, status rest.Updater) local.Client[T] {
	return local.Client[T]{Storage: st, Status: status}
}

// tenancyClients are the clients of the workspace tree.
func (r *registries) tenancyClients() tenancy.Clients {
	return tenancy.Clients{LogicalClusters: r.logicalClusters, Workspaces: r.workspaces, Types: r.workspaceTypes, Namespaces: r.namespaces}
}
