package definitions

import (
	"strings"
	"testing"

	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/managedfields"
	apiopenapi "k8s.io/apiserver/pkg/endpoints/openapi"
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

const refPrefix = "#/components/schemas/"

func testRef(name string) spec.Ref {
	return spec.MustCreateRef(refPrefix + common.EscapeJsonPointer(name))
}

// unescapeJSONPointer reverses common.EscapeJsonPointer.
func unescapeJSONPointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
}

func TestExpectedDefinitionsPresent(t *testing.T) {
	defs := GetOpenAPIDefinitions(testRef)
	for _, name := range []string{
		// openapi-gen emits OpenAPIModelName() values as keys for packages
		// carrying +k8s:openapi-model-package (all inputs of this package).
		"io.k8s.api.core.v1.ConfigMap",
		"io.k8s.api.rbac.v1.ClusterRole",
		"io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
		corev1.ConfigMap{}.OpenAPIModelName(),
		rbacv1.ClusterRole{}.OpenAPIModelName(),
		metav1.ObjectMeta{}.OpenAPIModelName(),
		tenancyv1alpha1.Workspace{}.OpenAPIModelName(),
	} {
		if _, ok := defs[name]; !ok {
			t.Errorf("definition %q missing", name)
		}
	}
}

// TestReferencesResolve checks that every $ref and every declared dependency
// of every definition names another definition in the map.
func TestReferencesResolve(t *testing.T) {
	requested := map[string]bool{}
	defs := GetOpenAPIDefinitions(func(name string) spec.Ref {
		requested[name] = true
		return testRef(name)
	})
	if len(defs) == 0 {
		t.Fatal("no definitions")
	}

	for name := range requested {
		if _, ok := defs[name]; !ok {
			t.Errorf("ref callback called with unknown definition %q", name)
		}
	}

	for name, def := range defs {
		for _, dep := range def.Dependencies {
			if _, ok := defs[dep]; !ok {
				t.Errorf("%s: dependency %q is not a definition", name, dep)
			}
		}
		walkSchema(&def.Schema, name, func(where, ref string) {
			if !strings.HasPrefix(ref, refPrefix) {
				t.Errorf("%s: unexpected $ref %q", where, ref)
				return
			}
			target := unescapeJSONPointer(strings.TrimPrefix(ref, refPrefix))
			if _, ok := defs[target]; !ok {
				t.Errorf("%s: $ref %q does not resolve to a definition", where, target)
			}
		})
	}
}

func walkSchema(s *spec.Schema, where string, visit func(where, ref string)) {
	if s == nil {
		return
	}
	if r := s.Ref.String(); r != "" {
		visit(where, r)
	}
	for k := range s.Properties {
		p := s.Properties[k]
		walkSchema(&p, where+"."+k, visit)
	}
	for k := range s.PatternProperties {
		p := s.PatternProperties[k]
		walkSchema(&p, where+"["+k+"]", visit)
	}
	if s.AdditionalProperties != nil {
		walkSchema(s.AdditionalProperties.Schema, where+"{}", visit)
	}
	if s.AdditionalItems != nil {
		walkSchema(s.AdditionalItems.Schema, where+"[+]", visit)
	}
	if s.Items != nil {
		walkSchema(s.Items.Schema, where+"[]", visit)
		for i := range s.Items.Schemas {
			walkSchema(&s.Items.Schemas[i], where+"[]", visit)
		}
	}
	for _, list := range [][]spec.Schema{s.AllOf, s.AnyOf, s.OneOf} {
		for i := range list {
			walkSchema(&list[i], where, visit)
		}
	}
	walkSchema(s.Not, where+"!", visit)
	for k := range s.Definitions {
		d := s.Definitions[k]
		walkSchema(&d, where+"#"+k, visit)
	}
}

// TestTypeConverter builds the server-side-apply type converter the way a
// generic apiserver does (names from NewDefinitionNamer, refs to
// #/components/schemas) and converts a few objects with it.
func TestTypeConverter(t *testing.T) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		corev1.AddToScheme,
		rbacv1.AddToScheme,
		tenancyv1alpha1.AddToScheme,
	} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	namer := apiopenapi.NewDefinitionNamer(scheme)

	refFn := func(name string) spec.Ref {
		defName, _ := namer.GetDefinitionName(name)
		return spec.MustCreateRef(refPrefix + common.EscapeJsonPointer(defName))
	}
	schemas := map[string]*spec.Schema{}
	for name, def := range GetOpenAPIDefinitions(refFn) {
		defName, ext := namer.GetDefinitionName(name)
		s := def.Schema
		for k, v := range ext {
			s.AddExtension(k, v)
		}
		schemas[defName] = &s
	}

	tc, err := managedfields.NewTypeConverter(schemas, false)
	if err != nil {
		t.Fatalf("NewTypeConverter: %v", err)
	}

	for _, obj := range []runtime.Object{
		&corev1.ConfigMap{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: "default", Labels: map[string]string{"a": "b"}},
			Data:       map[string]string{"k": "v"},
		},
		&rbacv1.ClusterRole{
			TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"},
			ObjectMeta: metav1.ObjectMeta{Name: "cr"},
			Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"}}},
		},
		&tenancyv1alpha1.Workspace{
			TypeMeta:   metav1.TypeMeta{APIVersion: "tenancy.kcp.io/v1alpha1", Kind: "Workspace"},
			ObjectMeta: metav1.ObjectMeta{Name: "ws"},
		},
	} {
		if _, err := tc.ObjectToTyped(obj); err != nil {
			t.Errorf("ObjectToTyped(%s): %v", obj.GetObjectKind().GroupVersionKind(), err)
		}
	}
}
