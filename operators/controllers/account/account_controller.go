// Package account is the account-operator's Account controller: every
// Account gets its organization's WorkspaceTypes (orgs), a Workspace, and
// an AccountInfo in that workspace; see README.md for the steps.
package account

import (
	"context"
	"fmt"
	"time"

	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/multicluster-runtime/pkg/multicluster"
	mcreconcile "sigs.k8s.io/multicluster-runtime/pkg/reconcile"

	corev1alpha1 "github.com/meshplane/meshplane/apis/core/v1alpha1"
	"github.com/meshplane/meshplane/providers/manager"
)

// Options configure the controller.
type Options struct {
	// OrgsPath is where organizations live (root:orgs), BasePath where the
	// base types org and account are (root).
	OrgsPath, BasePath string
	// PathOf returns a logical cluster's workspace path (the provider's
	// path index); nil skips the check that orgs are made in OrgsPath.
	PathOf func(cluster string) (string, bool)
	// ClusterCA is the core's CA (PEM), written into organizations'
	// AccountInfo (accounts copy their parent's).
	ClusterCA string
	// Workers is the number of Accounts reconciled in parallel.
	Workers int
	// Initializer is the workspace initializer the operator serves
	// (<cluster>:<type>); a workspace carrying it waits for BindCreator and
	// Release, which go through the initializer's virtual workspace.
	Initializer string
	// BindCreator binds creator to cluster-admin in a workspace's cluster;
	// Release removes the initializer from it.
	BindCreator func(ctx context.Context, cluster, creator string) error
	Release     func(ctx context.Context, cluster string) error
	// Client, when set, returns an engaged workspace's client; default:
	// the provider kit's (sharing one REST mapper).
	Client func(ctx context.Context, cluster string) (ctrl.Client, error)
}

// clients returns the client of an engaged cluster.
type clients func(ctx context.Context, cluster string) (ctrl.Client, error)

// SetupWithManager adds the controller to the kit's manager. It follows
// Accounts, and the Workspaces they own, in every workspace at once
// (manager.Kit.WildcardController) rather than engaging each workspace.
func SetupWithManager(kit *manager.Kit, opts Options) error {
	c := clients(opts.Client)
	if c == nil {
		c = kit.Client
	}
	r := newReconciler(c, opts)
	return kit.WildcardController("account", &corev1alpha1.Account{}, opts.Workers,
		mcreconcile.Func(func(ctx context.Context, req mcreconcile.Request) (reconcile.Result, error) {
			after, err := r.reconcile(ctx, string(req.ClusterName), req.Name)
			return reconcile.Result{RequeueAfter: after}, err
		}),
		// A Workspace's progress wakes its Account; its deletion does not
		// (when the Account's own workspace is torn down, its Workspaces
		// go before the Account is marked deleted, and must not be made
		// again).
		manager.Watch{Object: &tenancyv1alpha1.Workspace{}, Map: ownerAccounts, Changes: true})
}

// ownerAccounts maps a Workspace to the Accounts owning it (the operator
// sets the owner reference without controller: true).
func ownerAccounts(cluster string, obj ctrl.Object) []mcreconcile.Request {
	var reqs []mcreconcile.Request
	for _, o := range obj.GetOwnerReferences() {
		if o.Kind == corev1alpha1.AccountKind && o.APIVersion == corev1alpha1.SchemeGroupVersion.String() {
			reqs = append(reqs, mcreconcile.Request{ClusterName: multicluster.ClusterName(cluster),
				Request: reconcile.Request{NamespacedName: ctrl.ObjectKey{Name: o.Name}}})
		}
	}
	return reqs
}

func newReconciler(c clients, opts Options) *reconciler {
	return &reconciler{
		steps: []step{
			&workspaceTypeStep{orgsPath: opts.OrgsPath, basePath: opts.BasePath, pathOf: opts.PathOf,
				getAccountInfo: get[*corev1alpha1.AccountInfo](c, func() *corev1alpha1.AccountInfo { return &corev1alpha1.AccountInfo{} }),
				getType:        get[*tenancyv1alpha1.WorkspaceType](c, func() *tenancyv1alpha1.WorkspaceType { return &tenancyv1alpha1.WorkspaceType{} }),
				createType: func(ctx context.Context, cluster string, wt *tenancyv1alpha1.WorkspaceType) error {
					return create(ctx, c, cluster, wt)
				}},
			&workspaceStep{orgsPath: opts.OrgsPath,
				getWorkspace: get[*tenancyv1alpha1.Workspace](c, func() *tenancyv1alpha1.Workspace { return &tenancyv1alpha1.Workspace{} }),
				createWorkspace: func(ctx context.Context, cluster string, ws *tenancyv1alpha1.Workspace) error {
					return create(ctx, c, cluster, ws)
				},
				getAccountInfo: get[*corev1alpha1.AccountInfo](c, func() *corev1alpha1.AccountInfo { return &corev1alpha1.AccountInfo{} })},
			&accountInfoStep{
				getAccountInfo: get[*corev1alpha1.AccountInfo](c, func() *corev1alpha1.AccountInfo { return &corev1alpha1.AccountInfo{} }),
				createAccountInfo: func(ctx context.Context, cluster string, info *corev1alpha1.AccountInfo) error {
					return create(ctx, c, cluster, info)
				},
				updateAccountInfo: func(ctx context.Context, cluster string, info *corev1alpha1.AccountInfo) error {
					return update(ctx, c, cluster, info)
				},
				clusterCA: opts.ClusterCA},
			&initializeStep{initializer: opts.Initializer, bindCreator: opts.BindCreator, release: opts.Release},
			workspaceReadyStep{},
		},
		deletion: &deletionStep{
			getWorkspace: get[*tenancyv1alpha1.Workspace](c, func() *tenancyv1alpha1.Workspace { return &tenancyv1alpha1.Workspace{} }),
			deleteWorkspace: func(ctx context.Context, cluster, name string) error {
				return del(ctx, c, cluster, &tenancyv1alpha1.Workspace{ObjectMeta: metav1.ObjectMeta{Name: name}})
			},
			deleteType: func(ctx context.Context, cluster, name string) error {
				return del(ctx, c, cluster, &tenancyv1alpha1.WorkspaceType{ObjectMeta: metav1.ObjectMeta{Name: name}})
			},
		},
		progress:   newProgressWrites(progressHold, maxProgressHold),
		getAccount: get[*corev1alpha1.Account](c, func() *corev1alpha1.Account { return &corev1alpha1.Account{} }),
		updateAccount: func(ctx context.Context, cluster string, a *corev1alpha1.Account) error {
			return update(ctx, c, cluster, a)
		},
		updateStatus: func(ctx context.Context, cluster string, a *corev1alpha1.Account) error {
			cl, err := c(ctx, cluster)
			if err != nil {
				return err
			}
			return cl.Status().Update(ctx, a)
		},
	}
}

const callTimeout = 30 * time.Second

func get[T ctrl.Object](c clients, newObj func() T) func(ctx context.Context, cluster, name string) (T, error) {
	return func(ctx context.Context, cluster, name string) (T, error) {
		obj := newObj()
		cl, err := c(ctx, cluster)
		if err != nil {
			return obj, err
		}
		ctx, cancel := context.WithTimeout(ctx, callTimeout)
		defer cancel()
		if err := cl.Get(ctx, ctrl.ObjectKey{Name: name}, obj); err != nil {
			return obj, err
		}
		return obj, nil
	}
}

func create(ctx context.Context, c clients, cluster string, obj ctrl.Object) error {
	cl, err := c(ctx, cluster)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	return cl.Create(ctx, obj)
}

func update(ctx context.Context, c clients, cluster string, obj ctrl.Object) error {
	cl, err := c(ctx, cluster)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	return cl.Update(ctx, obj)
}

func del(ctx context.Context, c clients, cluster string, obj ctrl.Object) error {
	cl, err := c(ctx, cluster)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	if err := cl.Delete(ctx, obj, &ctrl.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)}); err != nil {
		return fmt.Errorf("deleting %s: %w", obj.GetName(), err)
	}
	return nil
}
