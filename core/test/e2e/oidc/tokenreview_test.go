package oidc

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/meshplane/meshplane/sdk/testing/framework"
	"github.com/meshplane/meshplane/sdk/testing/oidcissuer"
)

// TestTokenReviewOIDCAudiences: a TokenReview of a token of an
// --authentication-config issuer answers with the token's audiences as kube
// and kcp do: the issuer checks its own audiences, and the token is
// audience-agnostic towards the API (status.audiences are the API
// audiences, or those of spec.audiences among them; a review for another
// audience is not authenticated), and its user is in system:authenticated
// as on a request. Before the fix status.audiences was
// empty for such tokens and spec.audiences was ignored.
func TestTokenReviewOIDCAudiences(t *testing.T) {
	s := server(t)
	ws := s.CreateOrg(t, "oidc-tokenreview")
	review := func(token string, audiences ...string) authenticationv1.TokenReviewStatus {
		t.Helper()
		body, _ := json.Marshal(authenticationv1.TokenReview{TypeMeta: metav1.TypeMeta{APIVersion: "authentication.k8s.io/v1", Kind: "TokenReview"},
			Spec: authenticationv1.TokenReviewSpec{Token: token, Audiences: audiences}})
		res := s.AdminRequest(t, "POST", "/clusters/"+ws.Path+"/apis/authentication.k8s.io/v1/tokenreviews", body)
		framework.RequireCode(t, res, "TokenReview", 201)
		var tr authenticationv1.TokenReview
		res.JSON(t, &tr)
		return tr.Status
	}
	// The API audiences, as the review of kcp-admin's static token shows them.
	apiAudiences := review(s.KCPAdminToken(t)).Audiences
	if len(apiAudiences) == 0 {
		t.Fatal("the TokenReview of kcp-admin's static token lists no API audiences")
	}
	tok := global.Token(oidcissuer.Claims{"sub": "reviewed", "aud": audience}, time.Hour)
	if st := review(tok); !st.Authenticated || st.User.Username != "oidc:reviewed" || !slices.Contains(st.User.Groups, "system:authenticated") ||
		!slices.Equal(st.Audiences, apiAudiences) {
		t.Errorf("review of an OIDC token without spec.audiences: want oidc:reviewed in system:authenticated with the API audiences %v, got %+v", apiAudiences, st)
	}
	if st := review(tok, append([]string{"other"}, apiAudiences...)...); !st.Authenticated || !slices.Equal(st.Audiences, apiAudiences) {
		t.Errorf("review of an OIDC token for another audience and the API's: want the API audiences %v, got %+v", apiAudiences, st)
	}
	if st := review(tok, "vault"); st.Authenticated {
		t.Errorf("review of an OIDC token for audience vault only: want not authenticated, got %+v", st)
	}
}
