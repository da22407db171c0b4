package clusters

import (
	"context"
	"strings"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	corev1alpha1 "github.com/meshplane/meshplane/apis/core/v1alpha1"
)

// WatchGrants calls changed with an organization's store id whenever its
// grants change: a RoleAssignment in one of its workspaces (created,
// changed, e.g. Ready once its tuple is written, or deleted once its tuple
// is revoked) or its Store (spec.tuples). One wildcard watch per kind
// through the export's virtual workspace (vw), for all workspaces. It
// returns when ctx ends.
func WatchGrants(ctx context.Context, vw *rest.Config, reg *Registry, changed func(store string), log logr.Logger) error {
	cfg := rest.CopyConfig(vw)
	cfg.Host = strings.TrimSuffix(cfg.Host, "/") + "/clusters/*"
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	gv := corev1alpha1.SchemeGroupVersion
	roleAssignments := func(obj *unstructured.Unstructured) string {
		info, _, ok := reg.Get(obj.GetAnnotations()["kcp.io/cluster"])
		if !ok {
			return ""
		}
		return info.StoreID
	}
	stores := func(obj *unstructured.Unstructured) string {
		id, _, _ := unstructured.NestedString(obj.Object, "status", "storeId")
		return id
	}
	for resource, storeOf := range map[string]func(*unstructured.Unstructured) string{"roleassignments": roleAssignments, "stores": stores} {
		ri := client.Resource(gv.WithResource(resource))
		inf := cache.NewSharedIndexInformer(&cache.ListWatch{
			ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
				return ri.List(ctx, o)
			},
			WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
				return ri.Watch(ctx, o)
			},
		}, &unstructured.Unstructured{}, 0, cache.Indexers{})
		notify := func(obj any) {
			if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			if u, ok := obj.(*unstructured.Unstructured); ok {
				if store := storeOf(u); store != "" {
					changed(store)
				}
			}
		}
		if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    notify,
			UpdateFunc: func(_, obj any) { notify(obj) },
			DeleteFunc: notify,
		}); err != nil {
			return err
		}
		go inf.RunWithContext(ctx)
		log.Info("watching grants", "resource", resource+"."+gv.Group)
	}
	<-ctx.Done()
	return nil
}
