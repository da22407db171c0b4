package serviceaccounts

import (
	"fmt"
	"testing"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestTokenRequestLifetimeBounds checks kube's bounds on a TokenRequest's
// expirationSeconds with values a tenant may send: 9999999999999 seconds
// (which wraps around as a time.Duration into an allowed lifetime) and
// the extremes of int64 answer 422 Invalid, never a token.
func TestTokenRequestLifetimeBounds(t *testing.T) {
	s := server(t)
	cluster, k := s.NewCluster(t, "sa-token-bounds")
	k.Run(t, "create", "namespace", "team")
	k.Run(t, "create", "serviceaccount", "robot", "-n", "team")
	path := "/clusters/" + cluster + "/api/v1/namespaces/team/serviceaccounts/robot/token"
	request := func(seconds string) []byte {
		return fmt.Appendf(nil, `{"apiVersion":"authentication.k8s.io/v1","kind":"TokenRequest","spec":{"expirationSeconds":%s}}`, seconds)
	}
	for _, c := range []struct{ seconds, want string }{
		{"9999999999999", "larger than 2^32 seconds"},
		{"4294967297", "larger than 2^32 seconds"},
		{"9223372036854775807", "larger than 2^32 seconds"},
		{"-9223372036854775808", "less than 10 minutes"},
		{"599", "less than 10 minutes"},
	} {
		r := s.AdminRequest(t, "POST", path, request(c.seconds))
		framework.RequireStatus(t, r, "a TokenRequest for "+c.seconds+" seconds", 422, "Invalid")
		framework.RequireContains(t, r.Status(t).Message, c.want, "the 422's message")
		framework.RequireContains(t, r.Status(t).Message, "spec.expirationSeconds", "the 422's message")
	}
	framework.RequireCode(t, s.AdminRequest(t, "POST", path, request("4294967296")), "a TokenRequest for 2^32 seconds", 201)
	r := s.AdminRequest(t, "POST", path, []byte(`{"apiVersion":"authentication.k8s.io/v1","kind":"TokenRequest","spec":{"boundObjectRef":{"kind":"Secret","name":"nope"}}}`))
	framework.RequireStatus(t, r, "a TokenRequest bound to a missing Secret", 404, "NotFound")
	framework.RequireContains(t, r.Status(t).Message, `secrets "nope" not found`, "the 404's message")
}

// TestMaxTokenExpiration checks --service-account-max-token-expiration: a
// longer request gets a token for the maximum, with a warning, as in
// kube-apiserver.
func TestMaxTokenExpiration(t *testing.T) {
	s := framework.StartServer(t, framework.WithExtraArgs("--service-account-max-token-expiration=2h"))
	cluster, k := s.NewCluster(t, "sa-token-max")
	k.Run(t, "create", "namespace", "team")
	k.Run(t, "create", "serviceaccount", "robot", "-n", "team")
	path := "/clusters/" + cluster + "/api/v1/namespaces/team/serviceaccounts/robot/token"
	r := s.AdminRequest(t, "POST", path, []byte(`{"apiVersion":"authentication.k8s.io/v1","kind":"TokenRequest","spec":{"expirationSeconds":86400}}`))
	framework.RequireCode(t, r, "a TokenRequest for a day with a maximum of 2h", 201)
	var tr struct {
		Spec struct {
			ExpirationSeconds int64 `json:"expirationSeconds"`
		} `json:"spec"`
	}
	r.JSON(t, &tr)
	framework.RequireEqual(t, tr.Spec.ExpirationSeconds, int64(7200), "spec.expirationSeconds of the token minted")
	framework.RequireContains(t, r.Header.Get("Warning"), "shortened to 7200 seconds", "the response's Warning header")
	r = s.AdminRequest(t, "POST", path, []byte(`{"apiVersion":"authentication.k8s.io/v1","kind":"TokenRequest","spec":{"expirationSeconds":3600}}`))
	framework.RequireCode(t, r, "a TokenRequest for an hour", 201)
	r.JSON(t, &tr)
	framework.RequireEqual(t, tr.Spec.ExpirationSeconds, int64(3600), "spec.expirationSeconds of an hour's token")
}
