package server

import (
	"context"
	"fmt"
	"sort"
	"strings"

	apisv1alpha2 "github.com/kcp-dev/sdk/apis/apis/v1alpha2"
	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/meshplane/meshplane/core/internal/controllers/logicalcluster"
	"github.com/meshplane/meshplane/core/internal/registry/local"
)

// clusterContent is a registry of cluster-scoped objects whose objects a
// deleted logical cluster's deletion deletes.
type clusterContent interface {
	rest.Lister
	rest.GracefulDeleter
}

// namedContent is a registry with its <resource>.<group> name.
type namedContent struct {
	name    string
	storage clusterContent
}

// contentKeptByDeletion are the cluster-scoped resources the deletion of a
// logical cluster does not delete object by object, as in kcp: the
// LogicalCluster drives it, RBAC stays readable until the end (the purge
// removes it), child Workspaces were deleted and awaited before, and
// APIBindings go last (their bound objects with them).
var contentKeptByDeletion = map[string]bool{
	"logicalclusters." + corev1alpha1.SchemeGroupVersion.Group: true,
	"clusterroles.rbac.authorization.k8s.io":                   true,
	"clusterrolebindings.rbac.authorization.k8s.io":            true,
	"workspaces." + tenancyv1alpha1.SchemeGroupVersion.Group:   true,
	"apibindings." + apisv1alpha2.SchemeGroupVersion.Group:     true,
}

// clusterContents lists the built-in registries of cluster-scoped objects
// a logical cluster's deletion deletes (namespaces and
// CustomResourceDefinitions included: the namespace and CRD controllers
// delete what they hold), each once, in a stable order.
func (p *parts) clusterContents() []namedContent {
	seen := map[string]bool{}
	var out []namedContent
	add := func(name string, st rest.Storage) {
		content, ok := st.(clusterContent)
		if !ok || seen[name] || contentKeptByDeletion[name] {
			return
		}
		seen[name] = true
		out = append(out, namedContent{name: name, storage: content})
	}
	for gv, byPath := range p.storage {
		for path, st := range byPath {
			if strings.Contains(path, "/") {
				continue
			}
			if scoper, ok := st.(rest.Scoper); !ok || scoper.NamespaceScoped() {
				continue
			}
			add(path+"."+gv.Group, st)
		}
	}
	add("customresourcedefinitions.apiextensions.k8s.io", p.crds)
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// deleteClusterContent deletes the objects of a deleted logical cluster as
// kcp's logical cluster deletion does: every cluster-scoped object (the
// namespace controller empties the namespaces, the CRD controller removes
// the custom resources), and only once nothing else is left its
// APIBindings (whose controller deletes the bound objects). Objects are
// deleted through their registries, so finalizers hold them; what is left
// is returned.
func (p *parts) deleteClusterContent(ctx context.Context, cluster string) (logicalcluster.Remaining, error) {
	left := logicalcluster.NewRemaining()
	for _, c := range p.clusterContents() {
		if err := deleteEach(ctx, cluster, c, left); err != nil {
			return left, err
		}
	}
	if !left.Empty() {
		return left, nil
	}
	bindings := namedContent{name: "apibindings." + apisv1alpha2.SchemeGroupVersion.Group, storage: p.reg.bindings.Storage}
	return left, deleteEach(ctx, cluster, bindings, left)
}

// deleteEach deletes every object of c in cluster that is not being
// deleted yet, then counts what is left into left.
func deleteEach(ctx context.Context, cluster string, c namedContent, left logicalcluster.Remaining) error {
	cctx := local.Context(ctx, cluster, metav1.NamespaceNone)
	list, err := c.storage.List(cctx, &metainternalversion.ListOptions{})
	if apierrors.IsNotFound(err) || apierrors.IsMethodNotSupported(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("listing %s: %w", c.name, err)
	}
	background := metav1.DeletePropagationBackground
	var remaining []metav1.Object
	if err := meta.EachListItem(list, func(o runtime.Object) error {
		m, err := meta.Accessor(o)
		if err != nil {
			return err
		}
		if m.GetDeletionTimestamp() != nil {
			remaining = append(remaining, m)
			return nil
		}
		obj, deleted, err := c.storage.Delete(cctx, m.GetName(), rest.ValidateAllObjectFunc, &metav1.DeleteOptions{PropagationPolicy: &background})
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			return fmt.Errorf("deleting %s %s: %w", c.name, m.GetName(), err)
		case !deleted:
			// Marked deleted, held by finalizers.
			if held, err := meta.Accessor(obj); err == nil {
				remaining = append(remaining, held)
			}
		}
		return nil
	}); err != nil {
		return err
	}
	for _, m := range remaining {
		left.Objects[c.name]++
		for _, f := range m.GetFinalizers() {
			left.Finalizers[f]++
		}
	}
	return nil
}
