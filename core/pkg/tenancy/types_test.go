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
	only := func(refs ...tenancyv1alpha1.WorkspaceTypeReference) *tenancyv1alpha1.WorkspaceTypeSelector {
		return &tenancyv1alpha1.WorkspaceTypeSelector{Types: refs}
	}
	none := &tenancyv1alpha1.WorkspaceTypeSelector{None: true}
	root := typ("root", "root", tenancyv1alpha1.WorkspaceTypeSpec{})
	universal := typ("root", "universal", tenancyv1alpha1.WorkspaceTypeSpec{})
	org := typ("root", "organization", tenancyv1alpha1.WorkspaceTypeSpec{LimitAllowedParents: only(tenancyv1alpha1.WorkspaceTypeReference{Name: "root", Path: "root"})})
	// anyOrg is an organization alias without limits of its own.
	anyOrg := typ("root", "organization", tenancyv1alpha1.WorkspaceTypeSpec{})
	leaf := typ("root", "leaf", tenancyv1alpha1.WorkspaceTypeSpec{LimitAllowedChildren: none})
	orphan := typ("root", "orphan", tenancyv1alpha1.WorkspaceTypeSpec{LimitAllowedParents: none})
	orgsOnly := typ("root:acme", "orgs-only", tenancyv1alpha1.WorkspaceTypeSpec{LimitAllowedChildren: only(tenancyv1alpha1.WorkspaceTypeReference{Name: "organization", Path: "root"})})
	sameWorkspace := typ("root:acme", "team", tenancyv1alpha1.WorkspaceTypeSpec{LimitAllowedParents: only(tenancyv1alpha1.WorkspaceTypeReference{Name: "orgs-only"})})
	for _, tc := range []struct {
		name          string
		parent, child []Type
		wantErr       string // "" means compatible
	}{
		{"organization under root", []Type{root}, []Type{org, universal}, ""},
		{"universal anywhere", []Type{universal}, []Type{universal}, ""},
		{"organization under universal: the child limits its parents", []Type{universal}, []Type{org, universal},
			"workspace type root:organization only allows parents of types root:root"},
		{"anything under leaf: the parent allows no children", []Type{leaf}, []Type{universal},
			"workspace type root:leaf does not allow child workspaces"},
		{"orphan under root: the child allows no parent", []Type{root}, []Type{orphan},
			"workspace type root:orphan does not allow a parent workspace"},
		{"universal under orgs-only: the parent limits its children", []Type{orgsOnly}, []Type{universal},
			"workspace type root:acme:orgs-only only allows children of types root:organization"},
		{"organization alias under orgs-only", []Type{orgsOnly}, []Type{universal, anyOrg}, ""},
		{"a reference without path, under its type", []Type{orgsOnly}, []Type{sameWorkspace, anyOrg}, ""},
		{"a reference without path, elsewhere", []Type{universal}, []Type{sameWorkspace},
			"workspace type root:acme:team only allows parents of types root:acme:orgs-only"},
		{"children rules are checked first", []Type{leaf}, []Type{orphan},
			"workspace type root:leaf does not allow child workspaces"},
	} {
		err := CheckCompatible(tc.parent, tc.child)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tc.wantErr {
			t.Errorf("CheckCompatible, %s: error %q, want %q", tc.name, got, tc.wantErr)
		}
	}
}

func TestAncestors(t *testing.T) {
	for _, tc := range []struct {
		path string
		want []string
	}{
		{"root:a:b", []string{"root:a:b", "root:a", "root"}},
		{"root", []string{"root"}},
		{"", nil},
	} {
		if got := ancestors(tc.path); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ancestors(%q) = %q, want %q", tc.path, got, tc.want)
		}
	}
}

func TestParent(t *testing.T) {
	for _, tc := range []struct{ path, want string }{
		{"root:a:b", "root:a"},
		{"root:a", "root"},
		{"root", ""},
		{"", ""},
	} {
		if got := Parent(tc.path); got != tc.want {
			t.Errorf("Parent(%q) = %q, want %q", tc.path, got, tc.want)
		}
	}
}
