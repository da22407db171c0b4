// Package security is the security-operator's initializer and terminator
// of the WorkspaceType "security" (which org and account extend): while a
// workspace initializes it gives the organization its Store and the
// account its owner and parent tuples; while it terminates it deletes the
// account's tuples or the organization's Store. See README.md.
package security

import (
	"context"
	"errors"
	"fmt"
	"time"

	kcpcorev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	corev1alpha1 "github.com/meshplane/meshplane/apis/core/v1alpha1"
	"github.com/meshplane/meshplane/operators/lifecycle"
)

// OrgClusterAnnotation on a Store names the logical cluster of the
// organization it was made for, so the terminator of an org deletes only
// its own Store, never one of a recreated org of the same name.
const OrgClusterAnnotation = corev1alpha1.OrgClusterAnnotationKey

// Deps are what the handlers use besides the workspace's own client.
type Deps struct {
	// GetAccount reads an Account in a cluster (the export's virtual
	// workspace).
	GetAccount func(ctx context.Context, cluster, name string) (*corev1alpha1.Account, error)
	// GetStore, CreateStore and DeleteStore act on Stores in a cluster.
	GetStore    func(ctx context.Context, cluster, name string) (*corev1alpha1.Store, error)
	CreateStore func(ctx context.Context, cluster string, st *corev1alpha1.Store) error
	DeleteStore func(ctx context.Context, cluster string, st *corev1alpha1.Store) error
	// CoreModule is the core module of new Stores.
	CoreModule string
	// AccountInfo, when set, reads a workspace's AccountInfo for the
	// initializer without a request (the operator's cache; nil when it has
	// none yet); when unset, the lifecycle client reads it.
	AccountInfo func(ctx context.Context, cluster string) (*corev1alpha1.AccountInfo, error)
	// WorkspaceCluster returns the logical cluster of the Workspace name
	// in cluster, and whether it exists (the workspace tree: an account's
	// Workspace is named after its Account, next to it).
	WorkspaceCluster func(ctx context.Context, cluster, name string) (string, bool, error)
	// WriteTuples and ReadTuples act on an OpenFGA store.
	WriteTuples func(ctx context.Context, storeID string, add, remove []corev1alpha1.Tuple) error
	ReadTuples  func(ctx context.Context, storeID, object string) ([]corev1alpha1.Tuple, error)
}

// errWait is a step that waits for something outside; it is retried.
type errWait struct{ msg string }

func (e errWait) Error() string { return e.msg }

func waitFor(format string, args ...any) error { return errWait{fmt.Sprintf(format, args...)} }

// result turns a step's error into the watcher's answer: waiting is a
// requeue, a real error backs off.
func result(err error) (bool, time.Duration, error) {
	var w errWait
	if errors.As(err, &w) {
		return false, 2 * time.Second, nil
	}
	if err != nil {
		return false, 0, err
	}
	return true, 0, nil
}

// accountInfo reads the workspace's AccountInfo; nil when it has none.
func accountInfo(ctx context.Context, c client.Client) (*corev1alpha1.AccountInfo, error) {
	info := &corev1alpha1.AccountInfo{}
	if err := c.Get(ctx, client.ObjectKey{Name: corev1alpha1.AccountInfoName}, info); err != nil {
		if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
			// Not written yet, or the workspace's API binding not ready yet.
			return nil, nil
		}
		return nil, fmt.Errorf("reading AccountInfo: %w", err)
	}
	return info, nil
}

// Initializer returns the handler of the initializing virtual workspace.
func Initializer(d Deps) lifecycle.Handler {
	return func(ctx context.Context, c client.Client, cluster string, _ *kcpcorev1alpha1.LogicalCluster) (bool, time.Duration, error) {
		var info *corev1alpha1.AccountInfo
		var err error
		if d.AccountInfo != nil {
			info, err = d.AccountInfo(ctx, cluster)
		} else {
			info, err = accountInfo(ctx, c)
		}
		if err != nil {
			return result(err)
		}
		if info == nil {
			// The account-operator writes it while the workspace initializes.
			return result(waitFor("the workspace has no AccountInfo yet"))
		}
		if info.Spec.Account.Type == corev1alpha1.AccountTypeOrg {
			return result(d.initOrg(ctx, c, cluster, info))
		}
		return result(d.initAccount(ctx, c, cluster, info))
	}
}

// Terminator returns the handler of the terminating virtual workspace.
func Terminator(d Deps) lifecycle.Handler {
	return func(ctx context.Context, c client.Client, cluster string, _ *kcpcorev1alpha1.LogicalCluster) (bool, time.Duration, error) {
		info, err := accountInfo(ctx, c)
		if err != nil {
			return result(err)
		}
		if info == nil {
			// Not an account workspace, or its AccountInfo is gone already:
			// nothing of ours to clean up.
			return true, 0, nil
		}
		if info.Spec.Account.Type == corev1alpha1.AccountTypeOrg {
			return result(d.terminateOrg(ctx, cluster, info))
		}
		return result(d.terminateAccount(ctx, cluster, info))
	}
}
