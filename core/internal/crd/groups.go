package crd

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
)

// dotlessGroupDetail is the detail of Kubernetes' refusal of a CRD group
// without a dot.
const dotlessGroupDetail = "should be a domain with at least one dot"

// AllowDotlessGroups lets a CRD registry accept groups without a dot
// (apps, batch), as kcp does, so that Kubernetes' own kinds can be
// installed as CRDs in a workspace. Every other validation stays.
func AllowDotlessGroups(store *genericregistry.Store) {
	store.CreateStrategy = dotlessCreate{store.CreateStrategy}
	store.UpdateStrategy = dotlessUpdate{store.UpdateStrategy}
}

type dotlessCreate struct{ rest.RESTCreateStrategy }

func (s dotlessCreate) Validate(ctx context.Context, obj runtime.Object) field.ErrorList {
	return withoutDotlessGroup(s.RESTCreateStrategy.Validate(ctx, obj))
}

type dotlessUpdate struct{ rest.RESTUpdateStrategy }

func (s dotlessUpdate) ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	return withoutDotlessGroup(s.RESTUpdateStrategy.ValidateUpdate(ctx, obj, old))
}

func withoutDotlessGroup(errs field.ErrorList) field.ErrorList {
	var out field.ErrorList
	for _, e := range errs {
		if e.Type == field.ErrorTypeInvalid && e.Field == "spec.group" && e.Detail == dotlessGroupDetail {
			continue
		}
		out = append(out, e)
	}
	return out
}
