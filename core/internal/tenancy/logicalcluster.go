package tenancy

import (
	"context"
	"fmt"

	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	authenticationv1 "k8s.io/api/authentication/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/meshplane/meshplane/core/internal/reconciler/client"
)

// CreateLogicalCluster creates (idempotently) the LogicalCluster object of
// a new cluster, Initializing with the given initializers (Ready without).
// The workspace controller and the home workspace handler both use it.
func CreateLogicalCluster(ctx context.Context, lcs client.Writer[*corev1alpha1.LogicalCluster], cluster, path, typeID, url string,
	creator *authenticationv1.UserInfo, inits []corev1alpha1.LogicalClusterInitializer, terms []corev1alpha1.LogicalClusterTerminator,
	owner *corev1alpha1.LogicalClusterOwner) error {
	return CreateLogicalClusterOn(ctx, lcs, ShardName, cluster, path, typeID, url, creator, inits, terms, owner)
}

// CreateLogicalClusterOn is CreateLogicalCluster for a cluster on shard
// (lcs writes there).
func CreateLogicalClusterOn(ctx context.Context, lcs client.Writer[*corev1alpha1.LogicalCluster], shard, cluster, path, typeID, url string,
	creator *authenticationv1.UserInfo, inits []corev1alpha1.LogicalClusterInitializer, terms []corev1alpha1.LogicalClusterTerminator,
	owner *corev1alpha1.LogicalClusterOwner) error {
	lc := &corev1alpha1.LogicalCluster{
		ObjectMeta: metav1.ObjectMeta{
			Name:        corev1alpha1.LogicalClusterName,
			Annotations: map[string]string{PathAnnotation: path, TypeAnnotation: typeID, ShardAnnotation: shard},
			Finalizers:  []string{corev1alpha1.LogicalClusterFinalizerName},
			Labels:      LifecycleLabels(inits, terms),
		},
		Spec: corev1alpha1.LogicalClusterSpec{Owner: owner, Initializers: inits, Terminators: terms,
			CreatedBy: &corev1alpha1.OwnerUserInfo{Username: creator.Username, Groups: creator.Groups, UID: creator.UID}},
		Status: corev1alpha1.LogicalClusterStatus{URL: url, Phase: corev1alpha1.LogicalClusterPhaseInitializing,
			Initializers: inits, Terminators: terms},
	}
	if len(inits) == 0 {
		lc.Status.Phase = corev1alpha1.LogicalClusterPhaseReady
	}
	if groups := requiredGroupsFrom(ctx); groups != "" {
		lc.Annotations[RequiredGroupsAnnotation] = groups
	}
	_, err := lcs.Create(ctx, cluster, "", lc)
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating logical cluster %s: %w", cluster, err)
	}
	return nil
}

// EnsureAdmin binds the creator to cluster-admin in the new cluster.
func EnsureAdmin(ctx context.Context, bindings client.Writer[*rbacv1.ClusterRoleBinding], cluster string, owner *authenticationv1.UserInfo) error {
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

// OwnedBy reports whether lc belongs to Workspace name (UID uid) in
// cluster parent: its spec.owner, which only the system writes, names
// that Workspace. A LogicalCluster without an owner (root, a home
// workspace) belongs to no Workspace. An empty uid matches any.
func OwnedBy(lc *corev1alpha1.LogicalCluster, parent, name, uid string) bool {
	o := lc.Spec.Owner
	return o != nil && o.Resource == "workspaces" && o.Cluster == parent && o.Name == name &&
		(uid == "" || string(o.UID) == uid)
}
