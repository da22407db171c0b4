package server

import (
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/cel/openapi/resolver"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/klog/v2"

	builtinapi "github.com/meshplane/meshplane/core/internal/apis/builtin"
	"github.com/meshplane/meshplane/core/internal/controllers/policystatus"
	"github.com/meshplane/meshplane/core/internal/openapi/definitions"
	"github.com/meshplane/meshplane/core/internal/registry/local"
	"github.com/meshplane/meshplane/core/internal/registry/wildcard"
)

// installPolicyStatus fills in ValidatingAdmissionPolicy status. The type
// checker knows the built-in kinds (their OpenAPI definitions) and the
// kinds of the policy's cluster's CRDs and bound resources (their
// schemas); the expressions on other kinds are not checked (no warnings),
// as kube does for kinds it has no schema of.
func (p *parts) installPolicyStatus(inf informers) controller {
	gv := admissionregistrationv1.SchemeGroupVersion
	st, _ := p.storage[gv]["validatingadmissionpolicies"].(local.Storage)
	status, _ := p.storage[gv]["validatingadmissionpolicies/status"].(rest.Updater)
	builtin := resolver.NewDefinitionsSchemaResolver(definitions.GetOpenAPIDefinitions, builtinapi.Scheme)
	builtinMapper := p.builtinRESTMapper()
	check := func(cluster string, policy *admissionregistrationv1.ValidatingAdmissionPolicy) []admissionregistrationv1.ExpressionWarning {
		crds := crdSchemas{crds: p.crdIndex.List(cluster), static: p.crdGroup.StaticOpenAPISpec}
		checker := &validating.TypeChecker{SchemaResolver: builtin.Combine(crds), RestMapper: meta.MultiRESTMapper{builtinMapper, crds.restMapper()}}
		return checker.Check(policy)
	}
	return policystatus.New(clientOf[*admissionregistrationv1.ValidatingAdmissionPolicy](st, status),
		inf.of(p.storage[gv]["validatingadmissionpolicies"].(wildcard.Storage), &admissionregistrationv1.ValidatingAdmissionPolicy{}),
		check)
}

// builtinRESTMapper maps the built-in resources to their kinds.
func (p *parts) builtinRESTMapper() meta.RESTMapper {
	m := meta.NewDefaultRESTMapper(builtinapi.GroupVersions)
	for _, gv := range builtinapi.GroupVersions {
		for path, st := range p.storage[gv] {
			scoper, ok := st.(rest.Scoper)
			if !ok || strings.Contains(path, "/") {
				continue
			}
			kinds, _, err := builtinapi.Scheme.ObjectKinds(st.New())
			if err != nil || len(kinds) == 0 {
				klog.V(4).InfoS("No kind for a built-in resource", "groupVersion", gv, "resource", path)
				continue
			}
			scope := meta.RESTScopeRoot
			if scoper.NamespaceScoped() {
				scope = meta.RESTScopeNamespace
			}
			m.AddSpecific(gv.WithKind(kinds[0].Kind), gv.WithResource(path), gv.WithResource(singular(st, path)), scope)
		}
	}
	return m
}

// singular is the singular name a registry gives, else its plural.
func singular(st rest.Storage, plural string) string {
	if s, ok := st.(rest.SingularNameProvider); ok {
		return s.GetSingularName()
	}
	return plural
}
