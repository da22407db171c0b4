package crd

import (
	"context"

	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apiextensions-apiserver/pkg/registry/customresource"
	"k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// Kubernetes' validation of custom resources wants apiVersion
// <group>/<version>, "/v1" for the core group, which no object can say
// (its apiVersion is "v1"), and then skips the rest of its checks: the
// object's metadata and the schema. For a bound resource of the core group
// (services an export exports, as kcp serves them) that one refusal is
// dropped and the skipped checks are made here. kcp patches the same check
// in its fork of Kubernetes.

// coreGroupChecks are the checks the refusal skips.
type coreGroupChecks struct {
	namespaced     bool
	schema, status apiservervalidation.SchemaValidator
}

type coreGroupCreate struct {
	rest.RESTCreateStrategy
	checks coreGroupChecks
}

func (s coreGroupCreate) Validate(ctx context.Context, obj runtime.Object) field.ErrorList {
	errs, skipped := withoutCoreAPIVersion(s.RESTCreateStrategy.Validate(ctx, obj))
	if u, ok := obj.(*unstructured.Unstructured); ok && skipped {
		errs = append(errs, validation.ValidateObjectMetaAccessor(u, s.checks.namespaced, validation.NameIsDNSSubdomain, field.NewPath("metadata"))...)
		errs = append(errs, apiservervalidation.ValidateCustomResource(nil, u.UnstructuredContent(), s.checks.schema)...)
	}
	return errs
}

type coreGroupUpdate struct {
	rest.RESTUpdateStrategy
	checks coreGroupChecks
	status bool // the status subresource's: only the status is checked
}

func (s coreGroupUpdate) ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	errs, skipped := withoutCoreAPIVersion(s.RESTUpdateStrategy.ValidateUpdate(ctx, obj, old))
	u, ok := obj.(*unstructured.Unstructured)
	o, ok2 := old.(*unstructured.Unstructured)
	if !ok || !ok2 || !skipped {
		return errs
	}
	errs = append(errs, validation.ValidateObjectMetaAccessorUpdate(u, o, field.NewPath("metadata"))...)
	switch {
	case !s.status:
		errs = append(errs, apiservervalidation.ValidateCustomResourceUpdate(nil, u.UnstructuredContent(), o.UnstructuredContent(), s.checks.schema)...)
	case s.checks.status != nil:
		if status, ok := u.Object["status"]; ok {
			errs = append(errs, apiservervalidation.ValidateCustomResourceUpdate(field.NewPath("status"), status, o.Object["status"], s.checks.status)...)
		}
	}
	return errs
}

// withoutCoreAPIVersion drops the refusal of apiVersion v1; skipped tells
// that it was the only refusal of the type (a wrong kind is refused as
// before, without further checks).
func withoutCoreAPIVersion(errs field.ErrorList) (field.ErrorList, bool) {
	var out field.ErrorList
	dropped, kind := false, false
	for _, e := range errs {
		switch {
		case e.Field == "apiVersion" && e.Type == field.ErrorTypeInvalid && e.BadValue == "v1" && e.Detail == "must be /v1":
			dropped = true
			continue
		case e.Field == "kind":
			kind = true
		}
		out = append(out, e)
	}
	return out, dropped && !kind
}

// coreGroupStorage makes st accept objects of the core group: the main
// store (also behind scale) in place, the status subresource with a store
// of its own, which it returns (nil without one).
func coreGroupStorage(st customresource.CustomResourceStorage, status rest.RESTUpdateStrategy, checks coreGroupChecks) *statusREST {
	store := st.CustomResource.Store
	store.CreateStrategy = coreGroupCreate{store.CreateStrategy, checks}
	store.UpdateStrategy = coreGroupUpdate{RESTUpdateStrategy: store.UpdateStrategy, checks: checks}
	if st.Status == nil {
		return nil
	}
	statusStore := *store
	statusStore.UpdateStrategy = coreGroupUpdate{RESTUpdateStrategy: status, checks: checks, status: true}
	if r, ok := status.(rest.ResetFieldsStrategy); ok {
		statusStore.ResetFieldsStrategy = r
	}
	return &statusREST{store: &statusStore}
}

// statusREST is customresource.StatusREST on a store of the caller's.
type statusREST struct{ store *genericregistry.Store }

var _ = rest.Patcher(&statusREST{})

func (r *statusREST) New() runtime.Object { return &unstructured.Unstructured{} }

func (r *statusREST) Destroy() {}

func (r *statusREST) Get(ctx context.Context, name string, options *metav1.GetOptions) (runtime.Object, error) {
	return r.store.Get(ctx, name, options)
}

// Update never creates, as subresources do not.
func (r *statusREST) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc,
	updateValidation rest.ValidateObjectUpdateFunc, _ bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	return r.store.Update(ctx, name, objInfo, createValidation, updateValidation, false, options)
}

func (r *statusREST) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return r.store.GetResetFields()
}
