// Package workspace turns Workspace objects into logical clusters.
//
// Reconcile steps, in order:
//  1. deleting: delete the child LogicalCluster, wait for it to go, then
//     release the Workspace's finalizer;
//  2. scheduling: resolve the type and its initializers, create the
//     child's LogicalCluster and the creator's workspace-admin binding,
//     then record spec.cluster and spec.URL;
//  3. phase: mirror the LogicalCluster's phase and initializers.
package workspace

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math/big"
	"strings"
	"time"

	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
	conditionsv1alpha1 "github.com/kcp-dev/sdk/apis/third_party/conditions/apis/conditions/v1alpha1"
	"github.com/kcp-dev/sdk/apis/third_party/conditions/util/conditions"
	authenticationv1 "k8s.io/api/authentication/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/meshplane/meshplane/core/pkg/clusters"
	"github.com/meshplane/meshplane/core/pkg/controllers/runner"
	"github.com/meshplane/meshplane/core/pkg/registry/local"
	"github.com/meshplane/meshplane/core/pkg/registry/wildcard"
	"github.com/meshplane/meshplane/core/pkg/tenancy"
)

// Controller reconciles Workspaces.
type Controller struct {
	Clients       tenancy.Clients
	Bindings      local.Client[*rbacv1.ClusterRoleBinding]
	Index         *tenancy.Index
	Types         *tenancy.Types
	ExternalURL   string
	WorkspaceList wildcard.Storage

	runner *runner.Runner
}

// Key of a workspace: <parent cluster>|<name>.
func Key(cluster, name string) string { return cluster + "|" + name }

// Run reconciles until ctx is done.
func (c *Controller) Run(ctx context.Context) {
	c.runner = runner.New("workspace", 4, c.reconcile)
	informer := wildcard.NewInformer(c.WorkspaceList, &tenancyv1alpha1.Workspace{})
	enqueue := func(obj any) {
		if ws, ok := obj.(*tenancyv1alpha1.Workspace); ok {
			c.runner.Add(Key(ws.Annotations[clusters.Annotation], ws.Name))
		}
	}
	_, _ = informer.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: enqueue, UpdateFunc: func(_, o any) { enqueue(o) }})
	// A change of a child's LogicalCluster concerns its Workspace.
	enqueueOwner := func(obj any) {
		if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = t.Obj
		}
		if lc, ok := obj.(*corev1alpha1.LogicalCluster); ok && lc.Spec.Owner != nil && lc.Spec.Owner.Resource == "workspaces" {
			c.runner.Add(Key(lc.Spec.Owner.Cluster, lc.Spec.Owner.Name))
		}
	}
	_, _ = c.Index.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: enqueueOwner, UpdateFunc: func(_, o any) { enqueueOwner(o) }, DeleteFunc: enqueueOwner})
	go informer.RunWithContext(ctx)
	c.runner.Run(ctx)
}

func (c *Controller) reconcile(ctx context.Context, key string) (time.Duration, error) {
	parent, name, _ := strings.Cut(key, "|")
	ws, err := c.Clients.Workspaces.Get(ctx, parent, "", name)
	if apierrors.IsNotFound(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	switch {
	case ws.DeletionTimestamp != nil:
		return c.reconcileDeletion(ctx, parent, ws)
	case ws.Spec.Cluster == "":
		return 0, c.schedule(ctx, parent, ws)
	default:
		return 0, c.reconcilePhase(ctx, parent, ws)
	}
}

func (c *Controller) reconcileDeletion(ctx context.Context, parent string, ws *tenancyv1alpha1.Workspace) (time.Duration, error) {
	if ws.Spec.Cluster != "" {
		lc, err := c.Clients.LogicalClusters.Get(ctx, ws.Spec.Cluster, "", corev1alpha1.LogicalClusterName)
		switch {
		case err == nil:
			if lc.DeletionTimestamp == nil {
				if err := c.Clients.LogicalClusters.Delete(ctx, ws.Spec.Cluster, "", lc.Name); err != nil && !apierrors.IsNotFound(err) {
					return 0, err
				}
			}
			if ws.Status.Phase != corev1alpha1.LogicalClusterPhaseTerminating {
				ws = ws.DeepCopy()
				ws.Status.Phase = corev1alpha1.LogicalClusterPhaseTerminating
				ws.Status.Terminators = lc.Status.Terminators
				_, err := c.Clients.Workspaces.UpdateStatus(ctx, parent, "", ws.Name, ws)
				return time.Second, err
			}
			return 2 * time.Second, nil
		case !apierrors.IsNotFound(err):
			return 0, err
		}
	}
	ws = ws.DeepCopy()
	ws.Finalizers = without(ws.Finalizers, corev1alpha1.LogicalClusterFinalizerName)
	_, err := c.Clients.Workspaces.Update(ctx, parent, "", ws.Name, ws)
	if apierrors.IsNotFound(err) {
		return 0, nil
	}
	return 0, err
}

func (c *Controller) schedule(ctx context.Context, parent string, ws *tenancyv1alpha1.Workspace) error {
	if ws.Spec.Type == nil {
		return fmt.Errorf("workspace %s|%s has no type", parent, ws.Name)
	}
	parentPath := c.Index.Path(parent)
	t, err := c.Types.Resolve(ctx, *ws.Spec.Type, parentPath)
	if err != nil {
		return err
	}
	aliases, err := c.Types.Aliases(ctx, t)
	if err != nil {
		return err
	}
	inits, terms := tenancy.Lifecycle(aliases)
	cluster := ClusterName(parent, string(ws.UID))
	path := parentPath + ":" + ws.Name
	url := c.ExternalURL + "/clusters/" + path

	owner := &authenticationv1.UserInfo{}
	_ = json.Unmarshal([]byte(ws.Annotations[tenancyv1alpha1.ExperimentalWorkspaceOwnerAnnotationKey]), owner)
	if err := CreateLogicalCluster(ctx, c.Clients.LogicalClusters, cluster, path, t.ID(), url, owner, inits, terms,
		&corev1alpha1.LogicalClusterOwner{APIVersion: tenancyv1alpha1.SchemeGroupVersion.String(), Resource: "workspaces",
			Name: ws.Name, Cluster: parent, UID: ws.UID}); err != nil {
		return err
	}
	if err := EnsureAdmin(ctx, c.Bindings, cluster, owner); err != nil {
		return err
	}
	ws = ws.DeepCopy()
	ws.Spec.Cluster, ws.Spec.URL = cluster, url
	ws.Spec.Type = &tenancyv1alpha1.WorkspaceTypeReference{Name: tenancyv1alpha1.WorkspaceTypeName(t.Name), Path: t.Path}
	ws, err = c.Clients.Workspaces.Update(ctx, parent, "", ws.Name, ws)
	if err != nil {
		return err
	}
	ws.Status.Phase = corev1alpha1.LogicalClusterPhaseInitializing
	ws.Status.Initializers = inits
	ws.Status.Terminators = terms
	conditions.MarkTrue(ws, tenancyv1alpha1.WorkspaceScheduled)
	conditions.MarkFalse(ws, tenancyv1alpha1.WorkspaceInitialized, tenancyv1alpha1.WorkspaceInitializedInitializerExists,
		conditionsv1alpha1.ConditionSeverityInfo, "Initializers still exist: %v", inits)
	_, err = c.Clients.Workspaces.UpdateStatus(ctx, parent, "", ws.Name, ws)
	return err
}

// CreateLogicalCluster creates (idempotently) the LogicalCluster object of
// a new cluster, Initializing with the given initializers.
func CreateLogicalCluster(ctx context.Context, lcs local.Client[*corev1alpha1.LogicalCluster], cluster, path, typeID, url string,
	creator *authenticationv1.UserInfo, inits []corev1alpha1.LogicalClusterInitializer, terms []corev1alpha1.LogicalClusterTerminator,
	owner *corev1alpha1.LogicalClusterOwner) error {
	lc := &corev1alpha1.LogicalCluster{
		ObjectMeta: metav1.ObjectMeta{
			Name:        corev1alpha1.LogicalClusterName,
			Annotations: map[string]string{tenancy.PathAnnotation: path, tenancy.TypeAnnotation: typeID},
			Finalizers:  []string{corev1alpha1.LogicalClusterFinalizerName},
			Labels:      tenancy.LifecycleLabels(inits, nil),
		},
		Spec: corev1alpha1.LogicalClusterSpec{Owner: owner, Initializers: inits, Terminators: terms,
			CreatedBy: &corev1alpha1.OwnerUserInfo{Username: creator.Username, Groups: creator.Groups, UID: creator.UID}},
		Status: corev1alpha1.LogicalClusterStatus{URL: url, Phase: corev1alpha1.LogicalClusterPhaseInitializing,
			Initializers: inits, Terminators: terms},
	}
	if len(inits) == 0 {
		lc.Status.Phase = corev1alpha1.LogicalClusterPhaseReady
	}
	_, err := lcs.Create(ctx, cluster, "", lc)
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating logical cluster %s: %w", cluster, err)
	}
	return nil
}

// EnsureAdmin binds the creator to cluster-admin in the new cluster.
func EnsureAdmin(ctx context.Context, bindings local.Client[*rbacv1.ClusterRoleBinding], cluster string, owner *authenticationv1.UserInfo) error {
	if owner.Username == "" {
		return nil
	}
	crb := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "workspace-admin"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: owner.Username}},
	}
	if _, err := bindings.Create(ctx, cluster, "", crb); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("binding workspace admin: %w", err)
	}
	return nil
}

func (c *Controller) reconcilePhase(ctx context.Context, parent string, ws *tenancyv1alpha1.Workspace) error {
	lc, err := c.Clients.LogicalClusters.Get(ctx, ws.Spec.Cluster, "", corev1alpha1.LogicalClusterName)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	phase := lc.Status.Phase
	if lc.DeletionTimestamp != nil {
		phase = corev1alpha1.LogicalClusterPhaseTerminating
	}
	if ws.Status.Phase == phase && equalInits(ws.Status.Initializers, lc.Status.Initializers) {
		return nil
	}
	ws = ws.DeepCopy()
	ws.Status.Phase = phase
	ws.Status.Initializers = lc.Status.Initializers
	ws.Status.Terminators = lc.Status.Terminators
	if phase == corev1alpha1.LogicalClusterPhaseReady {
		conditions.MarkTrue(ws, tenancyv1alpha1.WorkspaceInitialized)
	}
	_, err = c.Clients.Workspaces.UpdateStatus(ctx, parent, "", ws.Name, ws)
	return err
}

// ClusterName derives a child's logical cluster name from its parent and
// the Workspace's UID: 16 base36 characters, stable across retries.
func ClusterName(parent, uid string) string {
	sum := sha256.Sum224([]byte(parent + "/" + uid))
	s := new(big.Int).SetBytes(sum[:]).Text(36)
	for len(s) < 16 {
		s = "0" + s
	}
	return s[:16]
}

func equalInits(a, b []corev1alpha1.LogicalClusterInitializer) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func without(list []string, s string) []string {
	var out []string
	for _, x := range list {
		if x != s {
			out = append(out, x)
		}
	}
	return out
}
