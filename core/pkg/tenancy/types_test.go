package tenancy

import (
	"reflect"
	"testing"

	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func typ(path, name string, spec tenancyv1alpha1.WorkspaceTypeSpec) Type {
	return Type{Path: path, WorkspaceType: &tenancyv1alpha1.WorkspaceType{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec}}
}

func TestCheckCompatible(t *testing.T) {
	root := typ("root", "root", tenancyv1alpha1.WorkspaceTypeSpec{})
	universal := typ("root", "universal", tenancyv1alpha1.WorkspaceTypeSpec{})
	org := typ("root", "organization", tenancyv1alpha1.WorkspaceTypeSpec{
		LimitAllowedParents: &tenancyv1alpha1.WorkspaceTypeSelector{Types: []tenancyv1alpha1.WorkspaceTypeReference{{Name: "root", Path: "root"}}}})
	leaf := typ("root", "leaf", tenancyv1alpha1.WorkspaceTypeSpec{LimitAllowedChildren: &tenancyv1alpha1.WorkspaceTypeSelector{None: true}})
	for _, tc := range []struct {
		name          string
		parent, child []Type
		ok            bool
	}{
		{"org under root", []Type{root}, []Type{org, universal}, true},
		{"org under universal", []Type{universal}, []Type{org, universal}, false},
		{"anything under leaf", []Type{leaf}, []Type{universal}, false},
		{"universal anywhere", []Type{universal}, []Type{universal}, true},
	} {
		err := CheckCompatible(tc.parent, tc.child)
		if (err == nil) != tc.ok {
			t.Errorf("%s: got err=%v, want ok=%v", tc.name, err, tc.ok)
		}
	}
}

func TestAncestors(t *testing.T) {
	if got, want := ancestors("root:a:b"), []string{"root:a:b", "root:a", "root"}; !reflect.DeepEqual(got, want) {
		t.Errorf("ancestors = %v, want %v", got, want)
	}
	if Parent("root:a") != "root" || Parent("root") != "" {
		t.Errorf("Parent wrong")
	}
}
