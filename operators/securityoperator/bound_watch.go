package securityoperator

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
)

// clusterAnnotation names an object's logical cluster in a wildcard list.
const clusterAnnotation = "kcp.io/cluster"

// boundSources are what a workspace's bound resources come from.
var boundSources = []schema.GroupVersionResource{
	{Group: "apis.kcp.io", Version: "v1alpha1", Resource: "apibindings"},
	{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"},
}

// watchBoundSources calls observe with the logical cluster of every
// APIBinding and CRD that is added, updated (present) or deleted in any
// workspace of base's shard, and the object's resource and name (one
// metadata-only watch of each across all of them, with base's
// credential), until ctx ends.
func watchBoundSources(ctx context.Context, base *rest.Config, observe func(cluster, object string, present bool)) error {
	cfg := rest.CopyConfig(base)
	cfg.Host = base.Host + "/clusters/*"
	mc, err := metadata.NewForConfig(cfg)
	if err != nil {
		return err
	}
	f := metadatainformer.NewSharedInformerFactory(mc, 0)
	for _, gvr := range boundSources {
		onObject := func(obj any, present bool) {
			if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			if m, ok := obj.(metav1.Object); ok {
				observe(m.GetAnnotations()[clusterAnnotation], gvr.Resource+"/"+m.GetName(), present)
			}
		}
		if _, err := f.ForResource(gvr).Informer().AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc:    func(o any) { onObject(o, true) },
			UpdateFunc: func(_, n any) { onObject(n, true) },
			DeleteFunc: func(o any) { onObject(o, false) },
		}); err != nil {
			return err
		}
	}
	f.Start(ctx.Done())
	return nil
}
