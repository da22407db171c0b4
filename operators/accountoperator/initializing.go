package accountoperator

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
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
	// typeName is the WorkspaceType in the provider workspace, read
	// with types, whose status lists the URLs.
	typeName string
	types    client.Client
	// urls are the virtual workspace of each shard; a workspace is
	// reached through its shard's (the others refuse it). Read again
	// when no URL serves a workspace (a shard added since).
	mu   sync.Mutex
	urls []string
	// servedBy remembers the URL serving a cluster (its initializer makes
	// several requests); bounded by servedByMax.
	servedBy map[string]string
	base     *rest.Config
	http     *http.Client
	scheme   *runtime.Scheme
	mapper   meta.RESTMapper
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
		if urls, err = initializingURLs(ctx, c, typeName); err != nil {
			last = err.Error()
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
	return &initializing{id: id, typeName: typeName, types: c, urls: urls, base: base, http: hc, scheme: scheme, mapper: m}, nil
}

// initializingURLs reads the initializing virtual workspace URLs of the
// WorkspaceType typeName (one per shard), sorted.
func initializingURLs(ctx context.Context, c client.Client, typeName string) ([]string, error) {
	wt := &tenancyv1alpha1.WorkspaceType{}
	if err := c.Get(ctx, client.ObjectKey{Name: typeName}, wt); err != nil {
		return nil, err
	}
	var urls []string
	for _, vw := range wt.Status.VirtualWorkspaces {
		if vw.Type == tenancyv1alpha1.VirtualWorkspaceTypeInitializing {
			urls = append(urls, vw.URL)
		}
	}
	if len(urls) == 0 {
		return nil, fmt.Errorf("its status names no initializing virtual workspace (is spec.initializer true?)")
	}
	slices.Sort(urls)
	return urls, nil
}

// URLs returns the virtual workspace URLs known now.
func (v *initializing) URLs() []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return slices.Clone(v.urls)
}

// client returns a client of cluster through the virtual workspace at
// url; all share one HTTP client (one connection pool).
func (v *initializing) client(url, cluster string) (client.Client, error) {
	cfg := rest.CopyConfig(v.base)
	cfg.Host = url + "/clusters/" + cluster
	return client.New(cfg, client.Options{Scheme: v.scheme, HTTPClient: v.http, Mapper: v.mapper})
}

// errNotServed: no shard's virtual workspace serves the cluster.
var errNotServed = errors.New("no shard's initializing virtual workspace serves the logical cluster")

// clientOf returns a client of cluster through its shard's virtual
// workspace: with several shards, the one whose virtual workspace reads
// the cluster's LogicalCluster (the others refuse a cluster they do not
// hold with 403), all asked at once. When none serves it, the type's
// URLs are read again (a shard added while the operator runs) and the
// new ones asked.
func (v *initializing) clientOf(ctx context.Context, cluster string) (client.Client, error) {
	v.mu.Lock()
	url, ok := v.servedBy[cluster]
	v.mu.Unlock()
	if ok {
		return v.client(url, cluster)
	}
	urls := v.URLs()
	c, err := v.probe(ctx, urls, cluster)
	if !errors.Is(err, errNotServed) {
		return c, err
	}
	fresh, rerr := initializingURLs(ctx, v.types, v.typeName)
	if rerr != nil || slices.Equal(fresh, urls) {
		return nil, err
	}
	v.mu.Lock()
	v.urls = fresh
	v.mu.Unlock()
	log.FromContext(ctx).Info("initializing virtual workspaces changed", "virtualWorkspaces", fresh)
	return v.probe(ctx, fresh, cluster)
}

// servedByMax bounds the remembered clusters (a workspace initializes
// once; the map is emptied when full).
const servedByMax = 1024

// probe asks every URL at once for the cluster's LogicalCluster and
// returns the client of the one that answers (also with one URL: a
// shard added since shows as a refusal there).
func (v *initializing) probe(ctx context.Context, urls []string, cluster string) (client.Client, error) {
	type answer struct {
		url string
		c   client.Client
		err error
	}
	answers := make(chan answer, len(urls))
	for _, url := range urls {
		go func() {
			c, err := v.client(url, cluster)
			if err == nil {
				err = c.Get(ctx, client.ObjectKey{Name: kcpcorev1alpha1.LogicalClusterName}, &kcpcorev1alpha1.LogicalCluster{})
			}
			answers <- answer{url, c, err}
		}()
	}
	var other error
	for range urls {
		a := <-answers
		switch {
		case a.err == nil:
			v.mu.Lock()
			if v.servedBy == nil || len(v.servedBy) >= servedByMax {
				v.servedBy = map[string]string{}
			}
			v.servedBy[cluster] = a.url
			v.mu.Unlock()
			return a.c, nil
		case !apierrors.IsForbidden(a.err) && other == nil:
			other = a.err
		}
	}
	if other != nil {
		return nil, other
	}
	return nil, fmt.Errorf("%w: %s", errNotServed, cluster)
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
	v.mu.Lock()
	delete(v.servedBy, cluster)
	v.mu.Unlock()
	return nil
}

// releaseAttempts bounds the retries of a release that conflicts.
const releaseAttempts = 5
