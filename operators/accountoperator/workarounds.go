package accountoperator

import (
	"context"
	"slices"
	"sync"

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
// export's virtual workspace, for what the core does not do yet: kcp makes
// the owner a privileged client names in a Workspace's
// experimental.tenancy.kcp.io/owner annotation the workspace's admin; the
// core always records the requesting user, so the operator binds the
// creator itself.
type direct struct {
	base   *rest.Config
	scheme *runtime.Scheme

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
