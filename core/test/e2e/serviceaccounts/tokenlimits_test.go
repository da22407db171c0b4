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
}
