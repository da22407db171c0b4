package invites

import (
	"context"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	corev1alpha1 "github.com/meshplane/meshplane/apis/core/v1alpha1"
)

const clusterAnnotation = "kcp.io/cluster"

var (
	invitesGVR = corev1alpha1.SchemeGroupVersion.WithResource("invites")
	grantsGVR  = corev1alpha1.SchemeGroupVersion.WithResource("roleassignments")
)

// Watch keeps a's Invites from one wildcard watch through the export's
// virtual workspace (vw) and sets a.Create to create RoleAssignments
// there; it returns when ctx ends.
func Watch(ctx context.Context, vw *rest.Config, a *Acceptor) error {
	all := rest.CopyConfig(vw)
	all.Host = strings.TrimSuffix(vw.Host, "/") + "/clusters/*"
	dc, err := dynamic.NewForConfig(all)
	if err != nil {
		return err
	}
	a.Create = func(ctx context.Context, cluster string, ra *corev1alpha1.RoleAssignment) error {
		cfg := rest.CopyConfig(vw)
		cfg.Host = strings.TrimSuffix(vw.Host, "/") + "/clusters/" + cluster
		c, err := dynamic.NewForConfig(cfg)
		if err != nil {
			return err
		}
		obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(ra)
		if err != nil {
			return err
		}
		_, err = c.Resource(grantsGVR).Create(ctx, &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{})
		return err
	}
	f := dynamicinformer.NewDynamicSharedInformerFactory(dc, 0)
	set := func(obj any) {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return
		}
		cluster := u.GetAnnotations()[clusterAnnotation]
		inv := &corev1alpha1.Invite{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, inv); err != nil {
			a.Log.Error(err, "decoding Invite", "cluster", cluster, "invite", u.GetName())
			return
		}
		a.Set(cluster, u.GetName(), inv)
	}
	del := func(obj any) {
		if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = tomb.Obj
		}
		if u, ok := obj.(*unstructured.Unstructured); ok {
			a.Set(u.GetAnnotations()[clusterAnnotation], u.GetName(), nil)
		}
	}
	if _, err := f.ForResource(invitesGVR).Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: set, UpdateFunc: func(_, obj any) { set(obj) }, DeleteFunc: del,
	}); err != nil {
		return fmt.Errorf("watching invites: %w", err)
	}
	a.Log.Info("watching invitations", "resource", invitesGVR.GroupResource().String(), "extraKey", a.ExtraKey)
	f.Start(ctx.Done())
	go a.Run(ctx)
	<-ctx.Done()
	f.Shutdown()
	return nil
}
