package account

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	corev1alpha1kcp "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/log"

	corev1alpha1 "github.com/meshplane/meshplane/apis/core/v1alpha1"
)

// initializeStep does the operator's part of the workspace's
// initialization: while the workspace is Initializing and carries the
// operator's initializer, it binds the Account's creator to cluster-admin
// inside and removes the initializer, both through the initializer's
// virtual workspace. So the workspace is never Ready before its creator is
// its admin. It reports on WorkspaceReady, the condition of the phase it
// moves along.
type initializeStep struct {
	initializer string
	bindCreator func(ctx context.Context, cluster, creator string) error
	release     func(ctx context.Context, cluster string) error

	// released holds when the operator removed its initializer from a
	// cluster (cluster name -> time.Time), until the Workspace shows it
	// gone: an Account reconciled again before that (its own status write
	// wakes it) does not bind and release again, which the initializer's
	// virtual workspace refuses once the initializer is gone.
	released sync.Map
}

// releasedMemory bounds how long a release is remembered while the
// Workspace still lists the initializer: the release succeeded, only the
// core's mirror of it into the Workspace is late (by up to a minute and a
// half in a burst of 1,000 Accounts on a loaded machine; binding again
// then fails with 403).
const releasedMemory = 10 * time.Minute

func (s *initializeStep) reconcile(ctx context.Context, st *state) result {
	acc, ws := st.account, st.workspace
	const cond = corev1alpha1.ConditionWorkspaceReady
	if ws.Status.Phase != corev1alpha1kcp.LogicalClusterPhaseInitializing ||
		!slices.Contains(ws.Status.Initializers, corev1alpha1kcp.LogicalClusterInitializer(s.initializer)) {
		s.released.Delete(ws.Spec.Cluster)
		return next
	}
	if at, ok := s.released.Load(ws.Spec.Cluster); ok {
		if time.Since(at.(time.Time)) < releasedMemory {
			return s.waiting(acc, ws.Name)
		}
		s.released.Delete(ws.Spec.Cluster)
	}
	if creator := ptr.Deref(acc.Spec.Creator, ""); creator != "" {
		if err := s.bindCreator(ctx, ws.Spec.Cluster, creator); err != nil {
			return failed(ctx, acc, cond, fmt.Errorf("making %s admin of workspace %s (initializer %s): %w", creator, ws.Name, s.initializer, err))
		}
	}
	if err := s.release(ctx, ws.Spec.Cluster); err != nil {
		return failed(ctx, acc, cond, fmt.Errorf("initializing workspace %s: %w", ws.Name, err))
	}
	now := time.Now()
	s.released.Range(func(k, at any) bool { // entries of Accounts deleted meanwhile
		if now.Sub(at.(time.Time)) >= releasedMemory {
			s.released.Delete(k)
		}
		return true
	})
	s.released.Store(ws.Spec.Cluster, now)
	log.FromContext(ctx).Info("initialized workspace", "workspace", ws.Name, "workspaceCluster", ws.Spec.Cluster, "initializer", s.initializer)
	return s.waiting(acc, ws.Name)
}

func (s *initializeStep) waiting(acc *corev1alpha1.Account, workspace string) result {
	return pending(acc, corev1alpha1.ConditionWorkspaceReady, time.Second, "workspace %s initialized by %s; waiting for it to be Ready", workspace, s.initializer)
}
