package account

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1alpha1kcp "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/log"

	corev1alpha1 "github.com/meshplane/meshplane/apis/core/v1alpha1"
	"github.com/meshplane/meshplane/operators/controllers/accountinfo"
)

// accountInfoStep writes AccountInfo "account" into the Account's
// workspace once it initializes.
type accountInfoStep struct {
	getAccountInfo    func(ctx context.Context, cluster, name string) (*corev1alpha1.AccountInfo, error)
	createAccountInfo func(ctx context.Context, cluster string, info *corev1alpha1.AccountInfo) error
	updateAccountInfo func(ctx context.Context, cluster string, info *corev1alpha1.AccountInfo) error
	// clusterCA is the PEM CA of the core, recorded in an org's AccountInfo.
	clusterCA string
}

func (s *accountInfoStep) reconcile(ctx context.Context, st *state) result {
	acc, ws := st.account, st.workspace
	const cond = corev1alpha1.ConditionAccountInfoReady
	switch ws.Status.Phase {
	case corev1alpha1kcp.LogicalClusterPhaseInitializing, corev1alpha1kcp.LogicalClusterPhaseReady:
	default:
		return pending(acc, cond, time.Second, "workspace %s is %s; the AccountInfo is written once it initializes", ws.Name, phase(ws.Status.Phase))
	}
	cluster := ws.Spec.Cluster
	want := desiredAccountInfo(st, s.clusterCA)
	got, err := s.getAccountInfo(ctx, cluster, corev1alpha1.AccountInfoName)
	switch {
	case gone(err):
		// Created with the finalizer the accountinfo controller adds to
		// every AccountInfo (one write less).
		want.Finalizers = []string{accountinfo.Finalizer}
		// A workspace appears here once it binds the core.platform-mesh.io export.
		if err := s.createAccountInfo(ctx, cluster, want); err != nil {
			if gone(err) {
				return pending(acc, cond, time.Second, "workspace %s does not serve core.platform-mesh.io yet (waiting for its APIBinding)", ws.Name)
			}
			if !apierrors.IsAlreadyExists(err) {
				return failed(ctx, acc, cond, fmt.Errorf("creating AccountInfo in workspace %s: %w", ws.Name, err))
			}
			return pending(acc, cond, time.Second, "AccountInfo in workspace %s was created concurrently; checking it", ws.Name)
		}
		log.FromContext(ctx).Info("created AccountInfo", "workspaceCluster", cluster)
	case err != nil:
		return failed(ctx, acc, cond, fmt.Errorf("reading AccountInfo in workspace %s: %w", ws.Name, err))
	default:
		if want.Spec.FGA.Store.ID == "" {
			want.Spec.FGA = got.Spec.FGA // an org's store ID is filled in by the security operator
		}
		if !equality.Semantic.DeepEqual(got.Spec, want.Spec) {
			got.Spec = want.Spec
			if err := s.updateAccountInfo(ctx, cluster, got); err != nil {
				return failed(ctx, acc, cond, fmt.Errorf("updating AccountInfo in workspace %s: %w", ws.Name, err))
			}
			log.FromContext(ctx).Info("updated AccountInfo", "workspaceCluster", cluster)
		}
	}
	return done(acc, cond, fmt.Sprintf("AccountInfo %q written in workspace %s", corev1alpha1.AccountInfoName, ws.Name))
}

// desiredAccountInfo is the AccountInfo of st's workspace.
func desiredAccountInfo(st *state, ca string) *corev1alpha1.AccountInfo {
	acc, ws := st.account, st.workspace
	self := corev1alpha1.AccountLocation{
		Name:               acc.Name,
		GeneratedClusterID: ws.Spec.Cluster,
		OriginClusterID:    st.cluster,
		Path:               pathOf(ws.Spec.URL),
		URL:                ws.Spec.URL,
		Type:               acc.Spec.Type,
	}
	info := &corev1alpha1.AccountInfo{ObjectMeta: metav1.ObjectMeta{Name: corev1alpha1.AccountInfoName}}
	info.Spec.Account = self
	if acc.Spec.Type == corev1alpha1.AccountTypeOrg || st.parent == nil {
		info.Spec.Organization = self
		info.Spec.ClusterInfo.CA = ca
		return info
	}
	p := st.parent.Spec
	parent := p.Account
	info.Spec.ParentAccount = &parent
	info.Spec.Organization = p.Organization
	info.Spec.FGA = p.FGA
	info.Spec.ClusterInfo = p.ClusterInfo
	if p.OIDC != nil {
		info.Spec.OIDC = p.OIDC.DeepCopy()
	}
	return info
}

// pathOf takes a workspace's path from its URL (<base>/clusters/<path>).
func pathOf(url string) string {
	if i := strings.LastIndex(url, "/clusters/"); i >= 0 {
		return strings.TrimSuffix(url[i+len("/clusters/"):], "/")
	}
	return ""
}

func phase(p corev1alpha1kcp.LogicalClusterPhaseType) string {
	if p == "" {
		return "not scheduled yet"
	}
	return string(p)
}
