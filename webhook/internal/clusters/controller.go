package clusters

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"
	ctrlclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	mcbuilder "sigs.k8s.io/multicluster-runtime/pkg/builder"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"
	"sigs.k8s.io/multicluster-runtime/pkg/multicluster"
	mcreconcile "sigs.k8s.io/multicluster-runtime/pkg/reconcile"

	corev1alpha1 "github.com/meshplane/meshplane/apis/core/v1alpha1"
)

// InfoOf turns a workspace's AccountInfo into what the registry keeps.
func InfoOf(cluster string, ai *corev1alpha1.AccountInfo) Info {
	org := ai.Spec.Organization.Name
	if o, ok := OrgOf(ai.Spec.Account.Path); ok {
		org = o
	}
	return Info{Cluster: cluster, Path: ai.Spec.Account.Path, Org: org, Account: ai.Spec.Account.Name,
		OriginCluster: ai.Spec.Account.OriginClusterID, StoreID: ai.Spec.FGA.Store.ID}
}

// SetupWithManager keeps reg up to date from the AccountInfo of every
// workspace the manager's provider engages. Each cluster is reconciled
// from its own informer: one slow or broken workspace delays only itself.
func SetupWithManager(mgr mcmanager.Manager, reg *Registry, log logr.Logger) error {
	return mcbuilder.ControllerManagedBy(mgr).
		Named("rebac-clusters").
		For(&corev1alpha1.AccountInfo{}).
		Complete(mcreconcile.Func(func(ctx context.Context, req mcreconcile.Request) (reconcile.Result, error) {
			cluster := string(req.ClusterName)
			if req.Name != corev1alpha1.AccountInfoName {
				return reconcile.Result{}, nil
			}
			cl, err := mgr.GetCluster(ctx, multicluster.ClusterName(cluster))
			if err != nil {
				// The cluster went away: forget it.
				reg.Delete(cluster)
				return reconcile.Result{}, nil
			}
			ai := &corev1alpha1.AccountInfo{}
			if err := cl.GetClient().Get(ctx, ctrlclient.ObjectKey{Name: req.Name}, ai); err != nil {
				if apierrors.IsNotFound(err) {
					reg.Delete(cluster)
					log.V(2).Info("account workspace gone", "cluster", cluster)
					return reconcile.Result{}, nil
				}
				return reconcile.Result{}, err
			}
			if !ai.DeletionTimestamp.IsZero() {
				reg.Delete(cluster)
				return reconcile.Result{}, nil
			}
			info := InfoOf(cluster, ai)
			if old, _, ok := reg.Get(cluster); !ok || old != info {
				log.Info("account workspace", "cluster", cluster, "path", info.Path, "org", info.Org, "account", info.Account, "store", info.StoreID)
			}
			reg.Set(info)
			return reconcile.Result{}, nil
		}))
}

// InitialList reads every AccountInfo at once through the virtual
// workspace's wildcard endpoint (vw is the config of the export's virtual
// workspace), fills reg and marks it synced, retrying until ctx ends.
// Answers for clusters the informers have not reached yet then need no
// 503.
func InitialList(ctx context.Context, vw *rest.Config, reg *Registry, log logr.Logger) error {
	hc, err := rest.HTTPClientFor(vw)
	if err != nil {
		return err
	}
	url := strings.TrimSuffix(vw.Host, "/") + "/clusters/*/apis/" + corev1alpha1.SchemeGroupVersion.String() + "/accountinfos"
	for {
		n, err := listOnce(ctx, hc, url, reg)
		if err == nil {
			reg.MarkSynced()
			log.Info("account workspaces read", "count", n)
			return nil
		}
		log.Info("listing account workspaces failed; retrying", "err", err.Error())
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

func listOnce(ctx context.Context, hc *http.Client, url string, reg *Registry) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		return 0, err
	}
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("GET %s: %d %s", url, resp.StatusCode, strings.TrimSpace(string(body)))
	}
	var list corev1alpha1.AccountInfoList
	if err := json.Unmarshal(body, &list); err != nil {
		return 0, fmt.Errorf("GET %s: %w", url, err)
	}
	n := 0
	for i := range list.Items {
		ai := &list.Items[i]
		cluster := ai.Annotations["kcp.io/cluster"]
		if cluster == "" || ai.Name != corev1alpha1.AccountInfoName {
			continue
		}
		if _, _, known := reg.Get(cluster); !known {
			reg.Set(InfoOf(cluster, ai))
		}
		n++
	}
	return n, nil
}
