package crdnooverlap

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/admission"

	"github.com/meshplane/meshplane/core/internal/clusters"
)

func TestValidate(t *testing.T) {
	bound := map[string][]*apiextensionsv1.CustomResourceDefinition{"gadgets": {{Spec: apiextensionsv1.CustomResourceDefinitionSpec{
		Group: "example.com", Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "gadgets"}}}}}
	p := New(func(cluster string) map[string][]*apiextensionsv1.CustomResourceDefinition {
		if cluster == "consumer" {
			return bound
		}
		return nil
	})
	for _, tt := range []struct {
		cluster, group, plural, want string
	}{
		{"consumer", "example.com", "gadgets", `cannot create because resource is bound by APIBinding "gadgets"`},
		{"consumer", "example.com", "widgets", ""},
		{"consumer", "other.com", "gadgets", ""},
		{"elsewhere", "example.com", "gadgets", ""},
	} {
		crd := &apiextensions.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: tt.plural + "." + tt.group},
			Spec: apiextensions.CustomResourceDefinitionSpec{Group: tt.group, Names: apiextensions.CustomResourceDefinitionNames{Plural: tt.plural}}}
		a := admission.NewAttributesRecord(crd, nil, apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"), "", crd.Name,
			apiextensionsv1.Resource("customresourcedefinitions").WithVersion("v1"), "", admission.Create, nil, false, nil)
		err := p.Validate(clusters.WithCluster(context.Background(), tt.cluster), a, nil)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s %s.%s: unexpected refusal %v", tt.cluster, tt.plural, tt.group, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s %s.%s: got %v, want %q", tt.cluster, tt.plural, tt.group, err, tt.want)
		}
	}
}
