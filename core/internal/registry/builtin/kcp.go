package builtin

import (
	"context"
	"encoding/json"

	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	"github.com/meshplane/meshplane/core/internal/clusters"
	"github.com/meshplane/meshplane/core/internal/virtual/lifecycle"
)

// kcpResources are kcp's tenancy.kcp.io and core.kcp.io kinds, served in
// every logical cluster like the Kubernetes built-ins.
var kcpResources = []resource{
	{gv: tenancyv1alpha1.SchemeGroupVersion, plural: "workspaces", singular: "workspace", kind: "Workspace",
		shortNames: []string{"ws"}, categories: []string{"kcp"}, hasStatus: true, nameFn: workspaceName,
		newFunc: func() runtime.Object { return &tenancyv1alpha1.Workspace{} },
		newList: func() runtime.Object { return &tenancyv1alpha1.WorkspaceList{} },
		onCreate: func(ctx context.Context, obj runtime.Object) {
			ws := obj.(*tenancyv1alpha1.Workspace)
			ws.Status = tenancyv1alpha1.WorkspaceStatus{Phase: corev1alpha1.LogicalClusterPhaseScheduling}
			ws.Finalizers = appendOnce(ws.Finalizers, corev1alpha1.LogicalClusterFinalizerName)
			if u, ok := genericapirequest.UserFrom(ctx); ok {
				owner, _ := json.Marshal(authenticationv1.UserInfo{Username: u.GetName(), UID: u.GetUID(), Groups: u.GetGroups()})
				if ws.Annotations == nil {
					ws.Annotations = map[string]string{}
				}
				ws.Annotations[tenancyv1alpha1.ExperimentalWorkspaceOwnerAnnotationKey] = string(owner)
			}
		},
		validate: func(obj runtime.Object) field.ErrorList {
			return validateMount(obj.(*tenancyv1alpha1.Workspace).Spec.Mount)
		},
		validateUpdate: func(obj, old runtime.Object) field.ErrorList {
			ws, o := obj.(*tenancyv1alpha1.Workspace), old.(*tenancyv1alpha1.Workspace)
			var errs field.ErrorList
			if !equality.Semantic.DeepEqual(ws.Spec.Mount, o.Spec.Mount) {
				errs = append(errs, field.Invalid(field.NewPath("spec", "mount"), ws.Spec.Mount, "mount is immutable"))
			}
			if o.Spec.Type != nil && (ws.Spec.Type == nil || *ws.Spec.Type != *o.Spec.Type) {
				errs = append(errs, field.Invalid(field.NewPath("spec", "type"), ws.Spec.Type, "field is immutable"))
			}
			if o.Spec.Cluster != "" && ws.Spec.Cluster != o.Spec.Cluster {
				errs = append(errs, field.Invalid(field.NewPath("spec", "cluster"), ws.Spec.Cluster, "field is immutable"))
			}
			return errs
		},
		columns: []column{
			// As kcp prints them: the type's name (not its path), the
			// region label, phase and URL.
			{"Type", "string", func(o runtime.Object) any {
				if t := o.(*tenancyv1alpha1.Workspace).Spec.Type; t != nil {
					return string(t.Name)
				}
				return ""
			}},
			{"Region", "string", func(o runtime.Object) any { return label(o.(*tenancyv1alpha1.Workspace).Labels, "region") }},
			{"Phase", "string", func(o runtime.Object) any { return string(o.(*tenancyv1alpha1.Workspace).Status.Phase) }},
			{"URL", "string", func(o runtime.Object) any { return o.(*tenancyv1alpha1.Workspace).Spec.URL }},
		}},
	{gv: tenancyv1alpha1.SchemeGroupVersion, plural: "workspacetypes", singular: "workspacetype", kind: "WorkspaceType",
		categories: []string{"kcp"}, hasStatus: true, nameFn: workspaceName,
		newFunc: func() runtime.Object { return &tenancyv1alpha1.WorkspaceType{} },
		newList: func() runtime.Object { return &tenancyv1alpha1.WorkspaceTypeList{} }},
	{gv: corev1alpha1.SchemeGroupVersion, plural: "logicalclusters", singular: "logicalcluster", kind: "LogicalCluster",
		categories: []string{"kcp"}, hasStatus: true, statusOnCreate: true, nameFn: apivalidation.NameIsDNSSubdomain,
		// Initializers releasing a workspace at once do not conflict.
		rebaseStatus: lifecycle.RebaseRelease,
		// The terminating virtual workspace shows deleted clusters only.
		filterList:  lifecycle.FilterList,
		filterWatch: lifecycle.FilterWatch,
		newFunc:     func() runtime.Object { return &corev1alpha1.LogicalCluster{} },
		newList:     func() runtime.Object { return &corev1alpha1.LogicalClusterList{} },
		columns: []column{
			{"Phase", "string", func(o runtime.Object) any { return string(o.(*corev1alpha1.LogicalCluster).Status.Phase) }},
			{"URL", "string", func(o runtime.Object) any { return o.(*corev1alpha1.LogicalCluster).Status.URL }},
		}},
	{gv: corev1alpha1.SchemeGroupVersion, plural: "shards", singular: "shard", kind: "Shard",
		categories: []string{"kcp"}, nameFn: apivalidation.NameIsDNSSubdomain,
		newFunc: func() runtime.Object { return &corev1alpha1.Shard{} },
		newList: func() runtime.Object { return &corev1alpha1.ShardList{} },
		columns: []column{
			{"Region", "string", func(o runtime.Object) any { return label(o.(*corev1alpha1.Shard).Labels, "region") }},
			{"URL", "string", func(o runtime.Object) any { return o.(*corev1alpha1.Shard).Spec.BaseURL }},
			{"External URL", "string", func(o runtime.Object) any { return o.(*corev1alpha1.Shard).Spec.ExternalURL }},
		}},
}

func init() { resources = append(resources, kcpResources...) }

// workspaceName validates names of workspaces and workspace types: one
// segment of a workspace path.
func workspaceName(name string, prefix bool) []string {
	if prefix {
		name += "a"
	}
	if !clusters.IsValidName(name) || len(name) > 63 {
		return []string{"must consist of lower case alphanumeric characters or '-', start and end with an alphanumeric character, and be at most 63 characters"}
	}
	return nil
}

// label is a label's value, or nil when it is not set, as kcp's CRD
// columns give it (kubectl prints an empty cell).
func label(labels map[string]string, key string) any {
	if v, ok := labels[key]; ok {
		return v
	}
	return nil
}

func appendOnce(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

// validateMount checks a Workspace's mount reference: apiVersion, kind
// and name are required.
func validateMount(m *tenancyv1alpha1.Mount) field.ErrorList {
	if m == nil {
		return nil
	}
	ref := field.NewPath("spec", "mount", "ref")
	var errs field.ErrorList
	if m.Reference.APIVersion == "" {
		errs = append(errs, field.Required(ref.Child("apiVersion"), ""))
	} else if _, err := schema.ParseGroupVersion(m.Reference.APIVersion); err != nil {
		errs = append(errs, field.Invalid(ref.Child("apiVersion"), m.Reference.APIVersion, err.Error()))
	}
	if m.Reference.Kind == "" {
		errs = append(errs, field.Required(ref.Child("kind"), ""))
	}
	if m.Reference.Name == "" {
		errs = append(errs, field.Required(ref.Child("name"), ""))
	}
	return errs
}
