package workspace

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
	conditionsv1alpha1 "github.com/kcp-dev/sdk/apis/third_party/conditions/apis/conditions/v1alpha1"
	"github.com/kcp-dev/sdk/apis/third_party/conditions/util/conditions"
	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/klog/v2"

	"github.com/meshplane/meshplane/core/internal/sharding"
	"github.com/meshplane/meshplane/core/internal/tenancy"
)

// schedulingReconciler gives a new Workspace its logical cluster: it
// resolves the type and its initializers, creates the LogicalCluster and
// the creator's admin binding, then records spec.cluster, spec.URL and
// the Initializing status.
type schedulingReconciler struct {
	path                 func(cluster string) string
	resolveType          func(ctx context.Context, ref tenancyv1alpha1.WorkspaceTypeReference, fromPath string) (tenancy.Type, error)
	aliases              func(ctx context.Context, t tenancy.Type) ([]tenancy.Type, error)
	createLogicalCluster func(ctx context.Context, cluster, path, typeID, url string, creator *authenticationv1.UserInfo,
		inits []corev1alpha1.LogicalClusterInitializer, terms []corev1alpha1.LogicalClusterTerminator, owner *corev1alpha1.LogicalClusterOwner) error
	ensureAdmin  func(ctx context.Context, cluster string, owner *authenticationv1.UserInfo) error
	update       func(ctx context.Context, parent string, ws *tenancyv1alpha1.Workspace) (*tenancyv1alpha1.Workspace, error)
	updateStatus func(ctx context.Context, parent string, ws *tenancyv1alpha1.Workspace) error
	externalURL  string
	// pickShard, when set, chooses the shard (name and external URL) of
	// a new workspace; without it every workspace is on this server.
	// cluster is the workspace's logical cluster; typeSelector, nil
	// or the selectors of the type and the types it extends
	// (sharding.TypeSelectorAnnotation).
	pickShard func(ctx context.Context, ws *tenancyv1alpha1.Workspace, cluster string, typeSelector labels.Selector) (name, externalURL string, err error)
}

func (r *schedulingReconciler) reconcile(ctx context.Context, parent string, ws *tenancyv1alpha1.Workspace) error {
	if ws.Spec.Type == nil {
		return fmt.Errorf("workspace %s|%s has no type", parent, ws.Name)
	}
	parentPath := r.path(parent)
	t, err := r.resolveType(ctx, *ws.Spec.Type, parentPath)
	if err != nil {
		return err
	}
	aliases, err := r.aliases(ctx, t)
	if err != nil {
		return err
	}
	inits, terms := tenancy.Lifecycle(aliases)
	cluster := tenancy.WorkspaceClusterName(parent, string(ws.UID))
	path := parentPath + ":" + ws.Name
	shard, externalURL := tenancy.ShardName, r.externalURL
	if r.pickShard != nil {
		types := make([]*tenancyv1alpha1.WorkspaceType, 0, len(aliases))
		for _, a := range aliases {
			types = append(types, a.WorkspaceType)
		}
		typeSelector, err := sharding.TypeSelector(types)
		if err != nil {
			return r.unschedulable(ctx, parent, ws, &sharding.NoShardError{Selector: err.Error()})
		}
		if shard, externalURL, err = r.pickShard(ctx, ws, cluster, typeSelector); err != nil {
			return r.unschedulable(ctx, parent, ws, err)
		}
		ctx = sharding.WithShard(ctx, shard)
	}
	url := externalURL + "/clusters/" + path
	klog.FromContext(ctx).V(2).Info("Scheduling workspace", "logicalCluster", cluster, "path", path, "type", t.ID(), "shard", shard)

	owner := &authenticationv1.UserInfo{}
	// A missing or unreadable owner annotation leaves the owner empty: no
	// admin binding is made, as before.
	_ = json.Unmarshal([]byte(ws.Annotations[tenancyv1alpha1.ExperimentalWorkspaceOwnerAnnotationKey]), owner)
	// The LogicalCluster carries the groups the Workspace requires.
	ctx = tenancy.WithRequiredGroups(ctx, ws.Annotations[tenancy.RequiredGroupsAnnotation])
	if err := r.createLogicalCluster(ctx, cluster, path, t.ID(), url, owner, inits, terms,
		&corev1alpha1.LogicalClusterOwner{APIVersion: tenancyv1alpha1.SchemeGroupVersion.String(), Resource: "workspaces",
			Name: ws.Name, Cluster: parent, UID: ws.UID}); err != nil {
		return err
	}
	if err := r.ensureAdmin(ctx, cluster, owner); err != nil {
		return err
	}
	ws = ws.DeepCopy()
	if ws.Annotations == nil {
		ws.Annotations = map[string]string{}
	}
	for k, v := range tenancy.ShardAnnotations(shard) {
		ws.Annotations[k] = v
	}
	ws.Spec.Cluster, ws.Spec.URL = cluster, url
	ws.Spec.Type = &tenancyv1alpha1.WorkspaceTypeReference{Name: tenancyv1alpha1.WorkspaceTypeName(t.Name), Path: t.Path}
	ws, err = r.update(ctx, parent, ws)
	if err != nil {
		return err
	}
	ws.Status.Phase = corev1alpha1.LogicalClusterPhaseInitializing
	ws.Status.Initializers = inits
	ws.Status.Terminators = terms
	conditions.MarkTrue(ws, tenancyv1alpha1.WorkspaceScheduled)
	conditions.MarkFalse(ws, tenancyv1alpha1.WorkspaceInitialized, tenancyv1alpha1.WorkspaceInitializedInitializerExists,
		conditionsv1alpha1.ConditionSeverityInfo, "Initializers still exist: %v", inits)
	return r.updateStatus(ctx, parent, ws)
}

// errUnschedulable: no shard takes the Workspace now; try again later.
var errUnschedulable = errors.New("no shard can take the workspace")

// unschedulable records in the WorkspaceScheduled condition that no shard
// matches (kcp's Unschedulable reason); other errors pass.
func (r *schedulingReconciler) unschedulable(ctx context.Context, parent string, ws *tenancyv1alpha1.Workspace, err error) error {
	var none *sharding.NoShardError
	if !errors.As(err, &none) {
		return err
	}
	if conditions.GetReason(ws, tenancyv1alpha1.WorkspaceScheduled) == tenancyv1alpha1.WorkspaceReasonUnschedulable &&
		conditions.GetMessage(ws, tenancyv1alpha1.WorkspaceScheduled) == err.Error() {
		return errUnschedulable
	}
	ws = ws.DeepCopy()
	conditions.MarkFalse(ws, tenancyv1alpha1.WorkspaceScheduled, tenancyv1alpha1.WorkspaceReasonUnschedulable,
		conditionsv1alpha1.ConditionSeverityError, "%s", err.Error())
	if err := r.updateStatus(ctx, parent, ws); err != nil {
		return err
	}
	return errUnschedulable
}
