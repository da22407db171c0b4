package accountoperator

import (
	"context"
	"fmt"
	"slices"
	"sync"

	apisv1alpha2 "github.com/kcp-dev/sdk/apis/apis/v1alpha2"
	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// creatorBinding is the ClusterRoleBinding that makes an Account's creator
// admin of the Account's workspace.
const creatorBinding = "meshplane:account-creator"

// direct talks to workspaces at <base>/clusters/<cluster>, outside the
// export's virtual workspace, for what the core does not do yet:
//   - kcp makes the owner a privileged client names in a Workspace's
//     experimental.tenancy.kcp.io/owner annotation the workspace's admin;
//     the core always records the requesting user, so the operator binds
//     the creator itself;
//   - creating a Workspace through the export's virtual workspace is
//     refused by the core's "use" check on the workspace type (it is
//     decided as a virtual-workspace request in the type's workspace, which
//     binds nothing); the operator then creates the Workspace directly;
//   - kcp accepts every permission claim of a default APIBinding (a
//     WorkspaceType's defaultAPIBindings); the core creates the binding
//     with none accepted, so the operator could not create Workspaces in
//     an organization. The operator accepts the export's claims.
type direct struct {
	base     *rest.Config
	provider client.Client // the provider workspace, for the export
	export   string
	scheme   *runtime.Scheme

	mu      sync.Mutex
	clients map[string]client.Client
}

func (d *direct) client(cluster string) (client.Client, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if c, ok := d.clients[cluster]; ok {
		return c, nil
	}
	cfg := rest.CopyConfig(d.base)
	cfg.Host = d.base.Host + "/clusters/" + cluster
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	c, err := client.New(cfg, client.Options{Scheme: d.scheme, HTTPClient: hc, Mapper: staticMapper(d.scheme)})
	if err != nil {
		return nil, err
	}
	if d.clients == nil {
		d.clients = map[string]client.Client{}
	}
	d.clients[cluster] = c
	return c, nil
}

// grantCreator binds creator to cluster-admin in cluster.
func (d *direct) grantCreator(ctx context.Context, cluster, creator string) error {
	c, err := d.client(cluster)
	if err != nil {
		return err
	}
	subject := rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: creator}
	crb := &rbacv1.ClusterRoleBinding{}
	err = c.Get(ctx, client.ObjectKey{Name: creatorBinding}, crb)
	if apierrors.IsNotFound(err) {
		crb = &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: creatorBinding},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
			Subjects:   []rbacv1.Subject{subject},
		}
		if err := c.Create(ctx, crb); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
		log.FromContext(ctx).Info("bound the account's creator to cluster-admin in its workspace", "workspaceCluster", cluster, "creator", creator)
		return nil
	}
	if err != nil {
		return err
	}
	if slices.Equal(crb.Subjects, []rbacv1.Subject{subject}) {
		return nil
	}
	crb.Subjects = []rbacv1.Subject{subject}
	return c.Update(ctx, crb)
}

// acceptClaims accepts every permission claim of the export on the
// workspace's binding of it (named after the export, as the core's default
// bindings are).
func (d *direct) acceptClaims(ctx context.Context, cluster string) error {
	export := &apisv1alpha2.APIExport{}
	if err := d.provider.Get(ctx, client.ObjectKey{Name: d.export}, export); err != nil {
		return fmt.Errorf("reading APIExport %s: %w", d.export, err)
	}
	c, err := d.client(cluster)
	if err != nil {
		return err
	}
	b := &apisv1alpha2.APIBinding{}
	if err := c.Get(ctx, client.ObjectKey{Name: d.export}, b); err != nil {
		if apierrors.IsNotFound(err) {
			return apierrors.NewNotFound(apisv1alpha2.Resource("apibindings"), d.export+" (waiting for the workspace's default APIBinding)")
		}
		return err
	}
	var want []apisv1alpha2.AcceptablePermissionClaim
	for _, pc := range export.Spec.PermissionClaims {
		want = append(want, apisv1alpha2.AcceptablePermissionClaim{
			ScopedPermissionClaim: apisv1alpha2.ScopedPermissionClaim{
				PermissionClaim: pc,
				Selector:        apisv1alpha2.PermissionClaimSelector{MatchAll: true},
			},
			State: apisv1alpha2.ClaimAccepted,
		})
	}
	if accepted(b.Spec.PermissionClaims, export.Spec.PermissionClaims) {
		return nil
	}
	b.Spec.PermissionClaims = want
	if err := c.Update(ctx, b); err != nil {
		return fmt.Errorf("accepting the claims of APIBinding %s: %w", d.export, err)
	}
	log.FromContext(ctx).Info("accepted the export's permission claims on the workspace's APIBinding", "workspaceCluster", cluster, "binding", d.export)
	return nil
}

func accepted(have []apisv1alpha2.AcceptablePermissionClaim, claims []apisv1alpha2.PermissionClaim) bool {
	for _, pc := range claims {
		ok := false
		for _, h := range have {
			if h.State == apisv1alpha2.ClaimAccepted && h.Group == pc.Group && h.Resource == pc.Resource && h.IdentityHash == pc.IdentityHash {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// createWorkspace creates ws in cluster directly.
func (d *direct) createWorkspace(ctx context.Context, cluster string, ws *tenancyv1alpha1.Workspace) error {
	c, err := d.client(cluster)
	if err != nil {
		return err
	}
	return c.Create(ctx, ws)
}
