package builtin

import (
	"context"

	apisv1alpha1 "github.com/kcp-dev/sdk/apis/apis/v1alpha1"
	apisv1alpha2 "github.com/kcp-dev/sdk/apis/apis/v1alpha2"
	"k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// BindingFinalizer holds a deleted APIBinding until the objects of its
// bound resources are gone from the workspace.
const BindingFinalizer = "apis.kcp.io/apibinding-finalizer"

// apisResources are kcp's apis.kcp.io kinds. APIExport and APIBinding are
// served in v1alpha2 (stored) and v1alpha1, converted both ways.
var apisResources = []resource{
	{gv: apisv1alpha2.SchemeGroupVersion, alsoIn: []schema.GroupVersion{apisv1alpha1.SchemeGroupVersion},
		plural: "apiexports", singular: "apiexport", kind: "APIExport", categories: []string{"kcp"}, hasStatus: true,
		nameFn:  apivalidation.NameIsDNSSubdomain,
		newFunc: func() runtime.Object { return &apisv1alpha2.APIExport{} }, newList: func() runtime.Object { return &apisv1alpha2.APIExportList{} },
		columns: []column{{"Identity", "string", func(o runtime.Object) any { return o.(*apisv1alpha2.APIExport).Status.IdentityHash }}}},
	{gv: apisv1alpha2.SchemeGroupVersion, alsoIn: []schema.GroupVersion{apisv1alpha1.SchemeGroupVersion},
		plural: "apibindings", singular: "apibinding", kind: "APIBinding", categories: []string{"kcp"}, hasStatus: true,
		nameFn:  apivalidation.NameIsDNSSubdomain,
		newFunc: func() runtime.Object { return &apisv1alpha2.APIBinding{} }, newList: func() runtime.Object { return &apisv1alpha2.APIBindingList{} },
		onCreate: func(ctx context.Context, obj runtime.Object) {
			b := obj.(*apisv1alpha2.APIBinding)
			b.Finalizers = appendOnce(b.Finalizers, BindingFinalizer)
		},
		validate: func(obj runtime.Object) field.ErrorList {
			b := obj.(*apisv1alpha2.APIBinding)
			if b.Spec.Reference.Export == nil || b.Spec.Reference.Export.Name == "" {
				return field.ErrorList{field.Required(field.NewPath("spec", "reference", "export", "name"), "an APIBinding must reference an APIExport")}
			}
			return nil
		},
		validateUpdate: func(obj, old runtime.Object) field.ErrorList {
			return validateBindingUpdate(obj.(*apisv1alpha2.APIBinding), old.(*apisv1alpha2.APIBinding))
		},
		columns: []column{
			{"Export", "string", func(o runtime.Object) any {
				if e := o.(*apisv1alpha2.APIBinding).Spec.Reference.Export; e != nil {
					if e.Path != "" {
						return e.Path + ":" + e.Name
					}
					return e.Name
				}
				return ""
			}},
			{"Phase", "string", func(o runtime.Object) any { return string(o.(*apisv1alpha2.APIBinding).Status.Phase) }},
		}},
	{gv: apisv1alpha1.SchemeGroupVersion, plural: "apiresourceschemas", singular: "apiresourceschema", kind: "APIResourceSchema",
		categories: []string{"kcp"}, nameFn: apivalidation.NameIsDNSSubdomain,
		newFunc: func() runtime.Object { return &apisv1alpha1.APIResourceSchema{} },
		newList: func() runtime.Object { return &apisv1alpha1.APIResourceSchemaList{} },
		validateUpdate: func(obj, old runtime.Object) field.ErrorList {
			s, o := obj.(*apisv1alpha1.APIResourceSchema), old.(*apisv1alpha1.APIResourceSchema)
			if !equality.Semantic.DeepEqual(s.Spec, o.Spec) {
				return field.ErrorList{field.Invalid(field.NewPath("spec"), "", "APIResourceSchema is immutable")}
			}
			return nil
		}},
	{gv: apisv1alpha1.SchemeGroupVersion, plural: "apiexportendpointslices", singular: "apiexportendpointslice", kind: "APIExportEndpointSlice",
		categories: []string{"kcp"}, hasStatus: true, nameFn: apivalidation.NameIsDNSSubdomain,
		newFunc: func() runtime.Object { return &apisv1alpha1.APIExportEndpointSlice{} },
		newList: func() runtime.Object { return &apisv1alpha1.APIExportEndpointSliceList{} }},
}

func init() { resources = append(resources, apisResources...) }

// validateBindingUpdate enforces the transition rule of kcp's APIBinding
// schema that kcp applies (self == oldSelf), with its message: the export
// reference does not change. A claim's selector may change, as in kcp (its
// rule there never refuses an update): the labels and what the provider
// sees follow it.
func validateBindingUpdate(b, o *apisv1alpha2.APIBinding) field.ErrorList {
	if !equality.Semantic.DeepEqual(b.Spec.Reference, o.Spec.Reference) {
		return field.ErrorList{field.Invalid(field.NewPath("spec", "reference"), "object", "APIExport reference must not be changed")}
	}
	return nil
}
