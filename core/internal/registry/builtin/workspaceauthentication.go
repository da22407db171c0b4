package builtin

import (
	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// workspaceAuthenticationConfigurations is kcp's per-workspace-type JWT
// authentication (tenancy.kcp.io), cluster-scoped, referenced from
// WorkspaceType.spec.authenticationConfigurations. Validation is what
// kcp's CRD checks (required fields and its x-kubernetes-validations);
// kube's full validation (audiences, CEL) runs when an authenticator is
// built from it, as in kcp, so an object kcp accepts is accepted here.
var workspaceAuthenticationConfigurations = resource{
	gv: tenancyv1alpha1.SchemeGroupVersion, plural: "workspaceauthenticationconfigurations",
	singular: "workspaceauthenticationconfiguration", kind: "WorkspaceAuthenticationConfiguration",
	categories: []string{"kcp"}, nameFn: apivalidation.NameIsDNSSubdomain,
	newFunc: func() runtime.Object { return &tenancyv1alpha1.WorkspaceAuthenticationConfiguration{} },
	newList: func() runtime.Object { return &tenancyv1alpha1.WorkspaceAuthenticationConfigurationList{} },
	validate: func(obj runtime.Object) field.ErrorList {
		return validateWorkspaceAuthentication(&obj.(*tenancyv1alpha1.WorkspaceAuthenticationConfiguration).Spec)
	},
}

func init() { resources = append(resources, workspaceAuthenticationConfigurations) }

func validateWorkspaceAuthentication(spec *tenancyv1alpha1.WorkspaceAuthenticationConfigurationSpec) field.ErrorList {
	var errs field.ErrorList
	jwtPath := field.NewPath("spec", "jwt")
	if spec.JWT == nil {
		errs = append(errs, field.Required(jwtPath, ""))
	}
	for i, j := range spec.JWT {
		p := jwtPath.Index(i)
		if j.Issuer.URL == "" {
			errs = append(errs, field.Required(p.Child("issuer", "url"), ""))
		}
		for k, r := range j.ClaimValidationRules {
			rp := p.Child("claimValidationRules").Index(k)
			switch {
			case r.Claim == "" && r.Expression == "":
				errs = append(errs, field.Invalid(rp, "", "either claim or expression must be specified"))
			case r.Claim != "" && r.Expression != "":
				errs = append(errs, field.Invalid(rp, "", "claim and expression cannot both be specified"))
			case r.Expression != "" && r.RequiredValue != "", r.Claim != "" && r.RequiredValue == "":
				errs = append(errs, field.Invalid(rp, "", "requiredValue can only be specified when claim is specified"))
			case r.Expression != "" && r.Message == "", r.Claim != "" && r.Message != "":
				errs = append(errs, field.Invalid(rp, "", "message can only be specified when expression is specified"))
			}
		}
		m := p.Child("claimMappings")
		errs = append(errs, validatePrefixedClaim(j.ClaimMappings.Username, m.Child("username"))...)
		errs = append(errs, validatePrefixedClaim(j.ClaimMappings.Groups, m.Child("groups"))...)
		if j.ClaimMappings.UID.Claim != "" && j.ClaimMappings.UID.Expression != "" {
			errs = append(errs, field.Invalid(m.Child("uid"), "", "claim and expression cannot both be specified"))
		}
		for k, e := range j.ClaimMappings.Extra {
			if e.Key == "" {
				errs = append(errs, field.Required(m.Child("extra").Index(k).Child("key"), ""))
			}
			if e.ValueExpression == "" {
				errs = append(errs, field.Required(m.Child("extra").Index(k).Child("valueExpression"), ""))
			}
		}
		for k, r := range j.UserValidationRules {
			if r.Expression == "" {
				errs = append(errs, field.Required(p.Child("userValidationRules").Index(k).Child("expression"), ""))
			}
			if r.Message == "" {
				errs = append(errs, field.Required(p.Child("userValidationRules").Index(k).Child("message"), ""))
			}
		}
	}
	return errs
}

// validatePrefixedClaim applies kcp's rules to a username or groups
// mapping that is set at all (an empty one is an omitted field).
func validatePrefixedClaim(c tenancyv1alpha1.PrefixedClaimOrExpression, p *field.Path) field.ErrorList {
	if c.Claim == "" && c.Expression == "" && c.Prefix == nil {
		return nil
	}
	switch {
	case c.Claim == "" && c.Expression == "":
		return field.ErrorList{field.Invalid(p, "", "either claim or expression must be specified")}
	case c.Claim != "" && c.Expression != "":
		return field.ErrorList{field.Invalid(p, "", "claim and expression cannot both be specified")}
	case c.Prefix != nil && c.Claim == "":
		return field.ErrorList{field.Invalid(p, "", "prefix can only be specified when claim is specified")}
	}
	return nil
}
