package server

import (
	"context"
	"fmt"
	"time"

	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/meshplane/meshplane/core/pkg/controllers/logicalcluster"
	"github.com/meshplane/meshplane/core/pkg/controllers/universal"
	"github.com/meshplane/meshplane/core/pkg/controllers/workspace"
	"github.com/meshplane/meshplane/core/pkg/controllers/workspacetype"
	"github.com/meshplane/meshplane/core/pkg/crd"
	"github.com/meshplane/meshplane/core/pkg/registry/builtin"
	"github.com/meshplane/meshplane/core/pkg/registry/local"
	"github.com/meshplane/meshplane/core/pkg/registry/wildcard"
	"github.com/meshplane/meshplane/core/pkg/storage/clusterstore"
	"github.com/meshplane/meshplane/core/pkg/tenancy"
)

// tenancyParts are the workspace tree's index, types and controllers.
type tenancyParts struct {
	clients     tenancy.Clients
	bindings    local.Client[*rbacv1.ClusterRoleBinding]
	index       *tenancy.Index
	types       *tenancy.Types
	externalURL string
	backend     *clusterstore.Backend
	storage     builtin.Storage
	// purgeExtra lists further storage prefixes of a cluster (its CRDs').
	purgeExtra func(cluster string) []string
}

func client[T runtime.Object](s builtin.Storage, gv interface{ String() string }, resource string) local.Client[T] {
	var c local.Client[T]
	for v, byPath := range s {
		if v.String() != gv.String() {
			continue
		}
		c.Storage = byPath[resource].(local.Storage)
		if st, ok := byPath[resource+"/status"].(rest.Updater); ok {
			c.Status = st
		}
	}
	return c
}

func newTenancy(s builtin.Storage, backend *clusterstore.Backend, externalURL string) *tenancyParts {
	t := &tenancyParts{externalURL: externalURL, backend: backend, storage: s}
	t.clients = tenancy.Clients{
		LogicalClusters: client[*corev1alpha1.LogicalCluster](s, corev1alpha1.SchemeGroupVersion, "logicalclusters"),
		Workspaces:      client[*tenancyv1alpha1.Workspace](s, tenancyv1alpha1.SchemeGroupVersion, "workspaces"),
		Types:           client[*tenancyv1alpha1.WorkspaceType](s, tenancyv1alpha1.SchemeGroupVersion, "workspacetypes"),
		Namespaces:      client[*corev1.Namespace](s, corev1.SchemeGroupVersion, "namespaces"),
	}
	t.bindings = client[*rbacv1.ClusterRoleBinding](s, rbacv1.SchemeGroupVersion, "clusterrolebindings")
	t.index = tenancy.NewIndex(t.clients.LogicalClusters.Storage)
	t.types = &tenancy.Types{Index: t.index, Store: t.clients.Types}
	return t
}

// Workspace implements authorization.Workspaces.
func (t *tenancyParts) Workspace(cluster string) (phase, path string, ok bool) {
	lc, ok := t.index.Get(cluster)
	if !ok {
		return "", "", false
	}
	return string(lc.Status.Phase), t.index.Path(cluster), true
}

// start bootstraps root and runs the tenancy controllers.
func (t *tenancyParts) start(ctx context.Context) error {
	go t.index.Informer().RunWithContext(ctx)
	if err := tenancy.Bootstrap(ctx, t.clients, t.externalURL); err != nil {
		return err
	}
	if !cache.WaitForCacheSync(ctx.Done(), t.index.HasSynced) {
		return fmt.Errorf("logical cluster index did not sync")
	}
	// Root must be resolvable before the server reports ready.
	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		_, ok := t.index.Resolve("root")
		return ok, nil
	}); err != nil {
		return fmt.Errorf("root logical cluster not indexed: %w", err)
	}
	lcPrefix := "/" + corev1alpha1.SchemeGroupVersion.Group + "/logicalclusters"
	wsInformer := wildcard.NewInformer(t.clients.Workspaces.Storage, &tenancyv1alpha1.Workspace{})
	go wsInformer.RunWithContext(ctx)
	go workspace.New(t.clients.Workspaces, t.clients.LogicalClusters, t.bindings, t.index, t.types, t.externalURL, wsInformer).Run(ctx)
	go logicalcluster.New(t.clients.LogicalClusters, t.clients.Workspaces, t.index, func(ctx context.Context, cluster string) error {
		var extra []string
		if t.purgeExtra != nil {
			extra = t.purgeExtra(cluster)
		}
		return t.backend.PurgeCluster(ctx, cluster, extra, map[string]bool{lcPrefix: true})
	}).Run(ctx)
	go (&universal.Controller{Clients: t.clients, Index: t.index}).Run(ctx)
	go (&workspacetype.Controller{Types: t.clients.Types, TypeList: t.clients.Types.Storage, ExternalURL: t.externalURL}).Run(ctx)
	return nil
}

// crdPrefixes returns the storage prefixes of a cluster's custom resources.
func crdPrefixes(index *crd.Index) func(cluster string) []string {
	return func(cluster string) []string {
		var out []string
		for _, c := range index.List(cluster) {
			out = append(out, crd.StoragePrefix(c))
		}
		return out
	}
}
