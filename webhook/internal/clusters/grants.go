package clusters

import (
	"context"
	"strings"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	corev1alpha1 "github.com/meshplane/meshplane/apis/core/v1alpha1"
)

// WatchGrants calls changed with an organization's name whenever its
// grants change: a RoleAssignment in one of its workspaces (created,
// changed, e.g. Ready once its tuple is written, or deleted once its tuple
// is revoked) or its Store (spec.tuples; a Store is named after its
// organization). One metadata-only wildcard watch per kind through the
// export's virtual workspace (vw), for all workspaces. It returns when ctx
// ends.
func WatchGrants(ctx context.Context, vw *rest.Config, reg *Registry, changed func(org string), log logr.Logger) error {
	cfg := rest.CopyConfig(vw)
	cfg.Host = strings.TrimSuffix(cfg.Host, "/") + "/clusters/*"
	mc, err := metadata.NewForConfig(cfg)
	if err != nil {
		return err
	}
	byCluster := func(m metav1.Object) string {
		info, _, _ := reg.Get(m.GetAnnotations()["kcp.io/cluster"])
		if info.StoreID == "" {
			return ""
		}
		return info.Org
	}
	// By name, known or not: an organization deleted and founded again
	// under its name changes its Store, dropping the old one's answers
	// (in a shared store its ids are the same).
	byOrg := func(m metav1.Object) string { return m.GetName() }
	f := metadatainformer.NewSharedInformerFactory(mc, 0)
	gv := corev1alpha1.SchemeGroupVersion
	for resource, orgOf := range map[string]func(metav1.Object) string{"roleassignments": byCluster, "stores": byOrg} {
		notify := func(obj any) {
			if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			if m, ok := obj.(metav1.Object); ok {
				if org := orgOf(m); org != "" {
					changed(org)
				}
			}
		}
		if _, err := f.ForResource(gv.WithResource(resource)).Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    notify,
			UpdateFunc: func(_, obj any) { notify(obj) },
			DeleteFunc: notify,
		}); err != nil {
			return err
		}
		log.Info("watching grants", "resource", resource+"."+gv.Group)
	}
	f.Start(ctx.Done())
	<-ctx.Done()
	f.Shutdown()
	return nil
}
