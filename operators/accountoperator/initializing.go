package accountoperator

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	kcpcorev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// CreatorBinding is the ClusterRoleBinding that makes an Account's creator
// admin of the Account's workspace.
const CreatorBinding = "meshplane:account-creator"

// initializing reaches a workspace that is still initializing through
// the initializing virtual workspace of the operator's WorkspaceType, whose
// URLs (one per shard) the type's status names:
//
//	<core>/services/initializingworkspaces/<initializer>/clusters/<cluster>/...
//
// kcp lets the initializer in while the workspace carries it (verb
// "initialize" on the WorkspaceType; a ServiceAccount token only for a type
// of the ServiceAccount's own workspace) and runs its requests as the
// workspace's owner, who created it: the operator itself, so it may bind
// cluster-admin there. No credential beyond the operator's own is needed.
type initializing struct {
	// id is the initializer, <cluster>:<type name>.
	id string
	// urls are the virtual workspace of each shard; a workspace is
	// reached through its shard's (the others refuse it).
	urls   []string
	base   *rest.Config
	http   *http.Client
	scheme *runtime.Scheme
	mapper meta.RESTMapper
}

// newInitializing waits (up to wait) for the initializing virtual
// workspace of the WorkspaceType typeName in the provider workspace.
func newInitializing(ctx context.Context, provider *rest.Config, scheme *runtime.Scheme, typeName string, wait time.Duration) (*initializing, error) {
	c, err := client.New(provider, client.Options{Scheme: scheme})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	var urls []string
	var last string
	for len(urls) == 0 {
		wt := &tenancyv1alpha1.WorkspaceType{}
		if err := c.Get(ctx, client.ObjectKey{Name: typeName}, wt); err != nil {
			last = err.Error()
		} else {
			last = "its status names no initializing virtual workspace (is spec.initializer true?)"
			for _, vw := range wt.Status.VirtualWorkspaces {
				if vw.Type == tenancyv1alpha1.VirtualWorkspaceTypeInitializing {
					urls = append(urls, vw.URL)
				}
			}
		}
		if len(urls) > 0 {
			break
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("WorkspaceType %s in %s: %s", typeName, provider.Host, last)
		case <-time.After(time.Second):
		}
	}
	_, id, ok := strings.Cut(urls[0], "/services/initializingworkspaces/")
	if !ok || !strings.Contains(id, ":") {
		return nil, fmt.Errorf("WorkspaceType %s: %q is no initializing virtual workspace URL", typeName, urls[0])
	}
	base := rest.CopyConfig(provider)
	hc, err := rest.HTTPClientFor(base)
	if err != nil {
		return nil, err
	}
	m := meta.NewDefaultRESTMapper(nil)
	for _, gvk := range []schema.GroupVersionKind{
		rbacv1.SchemeGroupVersion.WithKind("ClusterRoleBinding"),
		kcpcorev1alpha1.SchemeGroupVersion.WithKind("LogicalCluster"),
	} {
		m.Add(gvk, meta.RESTScopeRoot)
	}
	return &initializing{id: id, urls: urls, base: base, http: hc, scheme: scheme, mapper: m}, nil
}

// client returns a client of cluster through the virtual workspace at
// url; all share one HTTP client (one connection pool).
func (v *initializing) client(url, cluster string) (client.Client, error) {
	cfg := rest.CopyConfig(v.base)
	cfg.Host = url + "/clusters/" + cluster
	return client.New(cfg, client.Options{Scheme: v.scheme, HTTPClient: v.http, Mapper: v.mapper})
}

// clientOf returns a client of cluster through its shard's virtual
// workspace: with several shards, the first whose virtual workspace reads
// the cluster's LogicalCluster (the others refuse a cluster they do not
// hold with 403).
func (v *initializing) clientOf(ctx context.Context, cluster string) (client.Client, error) {
	if len(v.urls) == 1 {
		return v.client(v.urls[0], cluster)
	}
	var err error
	for _, url := range v.urls {
		var c client.Client
		if c, err = v.client(url, cluster); err != nil {
			return nil, err
		}
		err = c.Get(ctx, client.ObjectKey{Name: kcpcorev1alpha1.LogicalClusterName}, &kcpcorev1alpha1.LogicalCluster{})
		if err == nil {
			return c, nil
		}
		if !apierrors.IsForbidden(err) {
			return nil, err
		}
	}
	return nil, fmt.Errorf("no shard's initializing virtual workspace serves logical cluster %s: %w", cluster, err)
}

// bindCreator binds creator to cluster-admin in cluster.
func (v *initializing) bindCreator(ctx context.Context, cluster, creator string) error {
	c, err := v.clientOf(ctx, cluster)
	if err != nil {
		return err
	}
	subjects := []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: creator}}
	// Create first: on a new workspace (nearly always) that is the only
	// request; a binding already there is checked and corrected.
	err = c.Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: CreatorBinding},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   subjects,
	})
	if err == nil {
		log.FromContext(ctx).V(1).Info("bound the account's creator to cluster-admin in its workspace", "workspaceCluster", cluster, "creator", creator)
		return nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating ClusterRoleBinding %s: %w", CreatorBinding, err)
	}
	crb := &rbacv1.ClusterRoleBinding{}
	if err := c.Get(ctx, client.ObjectKey{Name: CreatorBinding}, crb); err != nil {
		return fmt.Errorf("reading ClusterRoleBinding %s: %w", CreatorBinding, err)
	}
	if slices.Equal(crb.Subjects, subjects) && crb.RoleRef.Name == "cluster-admin" && crb.RoleRef.Kind == "ClusterRole" {
		return nil
	}
	if crb.RoleRef.Name != "cluster-admin" || crb.RoleRef.Kind != "ClusterRole" {
		// roleRef is immutable: replace the binding.
		if err := c.Delete(ctx, crb); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("replacing ClusterRoleBinding %s: %w", CreatorBinding, err)
		}
		return fmt.Errorf("ClusterRoleBinding %s referred to %s %s; deleted it, it is made again", CreatorBinding, crb.RoleRef.Kind, crb.RoleRef.Name)
	}
	crb.Subjects = subjects
	if err := c.Update(ctx, crb); err != nil {
		return fmt.Errorf("updating ClusterRoleBinding %s: %w", CreatorBinding, err)
	}
	return nil
}

// release removes the initializer from the LogicalCluster's
// status.initializers (a status patch with optimistic locking, as kcp's
// initialization controllers do).
func (v *initializing) release(ctx context.Context, cluster string) error {
	c, err := v.clientOf(ctx, cluster)
	if err != nil {
		return err
	}
	id := kcpcorev1alpha1.LogicalClusterInitializer(v.id)
	// The workspace's other initializers (the security-operator's) are
	// removed concurrently: a conflict is read again and retried at once
	// rather than failing the step.
	for range releaseAttempts {
		lc := &kcpcorev1alpha1.LogicalCluster{}
		if err := c.Get(ctx, client.ObjectKey{Name: kcpcorev1alpha1.LogicalClusterName}, lc); err != nil {
			return fmt.Errorf("reading the LogicalCluster: %w", err)
		}
		if !slices.Contains(lc.Status.Initializers, id) {
			return nil
		}
		patch := client.MergeFromWithOptions(lc.DeepCopy(), client.MergeFromWithOptimisticLock{})
		lc.Status.Initializers = slices.DeleteFunc(lc.Status.Initializers, func(i kcpcorev1alpha1.LogicalClusterInitializer) bool { return i == id })
		if err = c.Status().Patch(ctx, lc, patch); err == nil || !apierrors.IsConflict(err) {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("removing initializer %s from the LogicalCluster: %w", v.id, err)
	}
	return nil
}

// releaseAttempts bounds the retries of a release that conflicts.
const releaseAttempts = 5
