package workspaceauth

import (
	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
	"k8s.io/apiserver/pkg/apis/apiserver"
)

// convert maps a WorkspaceAuthenticationConfiguration to kube's
// AuthenticationConfiguration: kcp's type mirrors kube's field for field.
func convert(in *tenancyv1alpha1.WorkspaceAuthenticationConfiguration) *apiserver.AuthenticationConfiguration {
	out := &apiserver.AuthenticationConfiguration{}
	for _, j := range in.Spec.JWT {
		a := apiserver.JWTAuthenticator{
			Issuer: apiserver.Issuer{
				URL:                  j.Issuer.URL,
				DiscoveryURL:         j.Issuer.DiscoveryURL,
				CertificateAuthority: j.Issuer.CertificateAuthority,
				Audiences:            j.Issuer.Audiences,
				AudienceMatchPolicy:  apiserver.AudienceMatchPolicyType(j.Issuer.AudienceMatchPolicy),
			},
			ClaimMappings: apiserver.ClaimMappings{
				Username: prefixed(j.ClaimMappings.Username),
				Groups:   prefixed(j.ClaimMappings.Groups),
				UID:      apiserver.ClaimOrExpression{Claim: j.ClaimMappings.UID.Claim, Expression: j.ClaimMappings.UID.Expression},
			},
		}
		for _, e := range j.ClaimMappings.Extra {
			a.ClaimMappings.Extra = append(a.ClaimMappings.Extra, apiserver.ExtraMapping{Key: e.Key, ValueExpression: e.ValueExpression})
		}
		for _, r := range j.ClaimValidationRules {
			a.ClaimValidationRules = append(a.ClaimValidationRules, apiserver.ClaimValidationRule{
				Claim: r.Claim, RequiredValue: r.RequiredValue, Expression: r.Expression, Message: r.Message})
		}
		for _, r := range j.UserValidationRules {
			a.UserValidationRules = append(a.UserValidationRules, apiserver.UserValidationRule{Expression: r.Expression, Message: r.Message})
		}
		out.JWT = append(out.JWT, a)
	}
	return out
}

func prefixed(in tenancyv1alpha1.PrefixedClaimOrExpression) apiserver.PrefixedClaimOrExpression {
	return apiserver.PrefixedClaimOrExpression{Claim: in.Claim, Prefix: in.Prefix, Expression: in.Expression}
}
