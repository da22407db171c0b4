package serviceaccounts

import (
	"encoding/base64"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestTokenReviewAudiences checks TokenReview's audiences as in kcp (kube):
// without spec.audiences a token is checked for the API audiences and the
// review returns the token's audiences among them; with spec.audiences
// (a service that verifies tokens minted for itself, e.g. --audience=vault)
// it is checked for those and returns them; a token for none of the asked
// audiences is not authenticated. Before the fix status.audiences was empty
// for every token but TokenRequest ones and spec.audiences was ignored.
func TestTokenReviewAudiences(t *testing.T) {
	s := server(t)
	org := s.CreateOrg(t, "sa-tokenreview")
	k := s.KubectlFor(org.Path)
	k.Run(t, "create", "serviceaccount", "robot", "-n", "default")
	api := strings.TrimSpace(k.Run(t, "create", "token", "robot", "-n", "default"))
	vault := strings.TrimSpace(k.Run(t, "create", "token", "robot", "-n", "default", "--audience=vault"))
	apiAudiences := jwtAudiences(t, api)

	review := func(token string, audiences ...string) authenticationv1.TokenReviewStatus {
		t.Helper()
		body, _ := json.Marshal(authenticationv1.TokenReview{TypeMeta: metav1.TypeMeta{APIVersion: "authentication.k8s.io/v1", Kind: "TokenReview"},
			Spec: authenticationv1.TokenReviewSpec{Token: token, Audiences: audiences}})
		res := s.AdminRequest(t, "POST", "/clusters/"+org.Path+"/apis/authentication.k8s.io/v1/tokenreviews", body)
		framework.RequireCode(t, res, "TokenReview", 201)
		var tr authenticationv1.TokenReview
		res.JSON(t, &tr)
		return tr.Status
	}
	for _, tc := range []struct {
		what      string
		token     string
		audiences []string
		want      []string // nil: not authenticated
	}{
		{"an API token without spec.audiences", api, nil, apiAudiences},
		{"an API token for its own audience", api, apiAudiences, apiAudiences},
		{"an API token for audience vault", api, []string{"vault"}, nil},
		{"a vault token for audience vault", vault, []string{"vault"}, []string{"vault"}},
		{"a vault token for vault and another audience", vault, []string{"other", "vault"}, []string{"vault"}},
		{"a vault token without spec.audiences", vault, nil, nil},
		{"kcp-admin's static token without spec.audiences", s.KCPAdminToken(t), nil, apiAudiences},
		{"kcp-admin's static token for audience vault", s.KCPAdminToken(t), []string{"vault"}, nil},
	} {
		st := review(tc.token, tc.audiences...)
		switch {
		case tc.want == nil && st.Authenticated:
			t.Errorf("%s: authenticated (audiences %v), want not", tc.what, st.Audiences)
		case tc.want != nil && (!st.Authenticated || !slices.Equal(st.Audiences, tc.want)):
			t.Errorf("%s: authenticated %v with audiences %v (error %q), want audiences %v", tc.what, st.Authenticated, st.Audiences, st.Error, tc.want)
		}
	}
}

// jwtAudiences reads the aud claim of a JWT.
func jwtAudiences(t *testing.T, token string) []string {
	t.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWT: %q", token)
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var claims struct {
		Aud []string `json:"aud"`
	}
	if err := json.Unmarshal(payload, &claims); err != nil || len(claims.Aud) == 0 {
		t.Fatalf("aud of the token: %v %s", err, payload)
	}
	return claims.Aud
}
