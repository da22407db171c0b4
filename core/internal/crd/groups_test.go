package crd

import (
	"context"
	"testing"

	apiextensions "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/rest"
)

type fakeStrategy struct {
	rest.RESTCreateStrategy
	errs field.ErrorList
}

func (f fakeStrategy) Validate(context.Context, runtime.Object) field.ErrorList { return f.errs }

func TestWithoutDotlessGroup(t *testing.T) {
	errs := field.ErrorList{
		field.Invalid(field.NewPath("spec", "group"), "apps", dotlessGroupDetail),
		field.Invalid(field.NewPath("spec", "group"), "Apps", "a lowercase RFC 1123 subdomain must consist of ..."),
	}
	got := dotlessCreate{fakeStrategy{errs: errs}}.Validate(context.Background(), &apiextensions.CustomResourceDefinition{})
	if len(got) != 1 || got[0].Detail == dotlessGroupDetail {
		t.Errorf("want only the other error, got %v", got)
	}
}
