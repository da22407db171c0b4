package myorgs

import (
	"context"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	corev1alpha1 "github.com/meshplane/meshplane/apis/core/v1alpha1"
)

// Watch keeps idx up to date from every RoleAssignment of the workspaces
// bound to core.platform-mesh.io (a wildcard watch through the export's
// virtual workspace, vw) and from the Stores and Accounts of root:orgs
// (orgsCluster tells its logical cluster; asked until it answers). The
// informers keep stripped objects (name, cluster, and the subject, the
// tuples' users or the creator), not the bodies. It returns when ctx ends.
func Watch(ctx context.Context, vw *rest.Config, orgsCluster func(context.Context) (string, error), idx *Index, log logr.Logger) error {
	var orgs string
	for {
		var err error
		if orgs, err = orgsCluster(ctx); err == nil {
			break
		}
		log.Info("reading root:orgs' logical cluster failed; retrying", "err", err.Error())
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(time.Second):
		}
	}
	factory := func(cluster string) (dynamicinformer.DynamicSharedInformerFactory, error) {
		cfg := rest.CopyConfig(vw)
		cfg.Host = strings.TrimSuffix(cfg.Host, "/") + "/clusters/" + cluster
		dc, err := dynamic.NewForConfig(cfg)
		if err != nil {
			return nil, err
		}
		return dynamicinformer.NewDynamicSharedInformerFactory(dc, 0), nil
	}
	all, err := factory("*")
	if err != nil {
		return err
	}
	inOrgs, err := factory(orgs)
	if err != nil {
		return err
	}
	gv := corev1alpha1.SchemeGroupVersion
	kinds := map[string]func(u *unstructured.Unstructured, gone bool){
		"roleassignments": func(u *unstructured.Unstructured, gone bool) {
			kind, _, _ := unstructured.NestedString(u.Object, "spec", "subject", "kind")
			name, _, _ := unstructured.NestedString(u.Object, "spec", "subject", "name")
			if gone {
				kind = ""
			}
			idx.SetRoleAssignment(clusterOf(u), u.GetName(), kind, name)
		},
		"stores": func(u *unstructured.Unstructured, gone bool) {
			var users []string
			if !gone {
				users, _, _ = unstructured.NestedStringSlice(u.Object, "spec", "users")
			}
			idx.SetStore(clusterOf(u), u.GetName(), users)
		},
		"accounts": func(u *unstructured.Unstructured, gone bool) {
			typ, _, _ := unstructured.NestedString(u.Object, "spec", "type")
			creator, _, _ := unstructured.NestedString(u.Object, "spec", "creator")
			if gone || typ != string(corev1alpha1.AccountTypeOrg) {
				creator = ""
			}
			idx.SetAccount(clusterOf(u), u.GetName(), creator)
		},
	}
	for resource, apply := range kinds {
		f := inOrgs
		if resource == "roleassignments" {
			f = all
		}
		inf := f.ForResource(gv.WithResource(resource)).Informer()
		if err := inf.SetTransform(strip); err != nil {
			return err
		}
		on := func(obj any, gone bool) {
			if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj, gone = tomb.Obj, true
			}
			if u, ok := obj.(*unstructured.Unstructured); ok {
				apply(u, gone)
			}
		}
		if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { on(obj, false) },
			UpdateFunc: func(_, obj any) { on(obj, false) },
			DeleteFunc: func(obj any) { on(obj, true) },
		}); err != nil {
			return err
		}
		log.Info("indexing organizations' grants", "resource", resource+"."+gv.Group)
	}
	all.Start(ctx.Done())
	inOrgs.Start(ctx.Done())
	<-ctx.Done()
	all.Shutdown()
	inOrgs.Shutdown()
	return nil
}

// strip keeps what the index needs of an object: its name, cluster and
// resource version (no kind: the informer knows it), and spec.subject (RoleAssignment), the users of
// spec.tuples (Store, as spec.users) or spec.type and spec.creator
// (Account).
func strip(obj any) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil
	}
	out := &unstructured.Unstructured{Object: map[string]any{}}
	out.SetName(u.GetName())
	out.SetResourceVersion(u.GetResourceVersion())
	if c := clusterOf(u); c != "" {
		out.SetAnnotations(map[string]string{clusterAnnotation: c})
	}
	spec := map[string]any{}
	if s, ok, _ := unstructured.NestedMap(u.Object, "spec", "subject"); ok {
		spec["subject"] = s
	}
	if ts, ok, _ := unstructured.NestedSlice(u.Object, "spec", "tuples"); ok {
		users := make([]any, 0, len(ts))
		for _, t := range ts {
			if m, ok := t.(map[string]any); ok {
				if user, ok := m["user"].(string); ok {
					users = append(users, user)
				}
			}
		}
		spec["users"] = users
	}
	for _, f := range []string{"type", "creator"} {
		if v, ok, _ := unstructured.NestedString(u.Object, "spec", f); ok {
			spec[f] = v
		}
	}
	out.Object["spec"] = spec
	return out, nil
}

const clusterAnnotation = "kcp.io/cluster"

func clusterOf(u *unstructured.Unstructured) string { return u.GetAnnotations()[clusterAnnotation] }
