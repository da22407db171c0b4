package tenancy

import (
	"encoding/json"
	"net/http"
	"net/url"
	"testing"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// selfSubjectReview is an empty SelfSubjectReview: every authenticated
// user may create one, so its answer shows whether impersonation passed.
const selfSubjectReview = `{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}`

func extraHeader(key string) string { return "Impersonate-Extra-" + url.PathEscape(key) }

// TestImpersonatingPrivilegedIdentities: a workspace admin may impersonate
// inside his workspace (his RBAC there allows it), but never a privileged
// group, a system identity or a reserved extra he does not hold (before
// the fix, `Impersonate-Group: system:masters` made bob system:masters).
func TestImpersonatingPrivilegedIdentities(t *testing.T) {
	tn := twoTenants(t)
	s := tn.s
	bob := s.UserToken(t, "bob")
	path := "/clusters/" + tn.bob.Path + "/apis/authentication.k8s.io/v1/selfsubjectreviews"
	warrant := `{"user":"alice","groups":["system:authenticated"]}`

	for _, tc := range []struct {
		what    string
		token   string
		headers map[string]string
		want    int
	}{
		{"bob as bob in system:masters", bob, map[string]string{"Impersonate-User": "bob", "Impersonate-Group": "system:masters"}, http.StatusForbidden},
		{"bob as kcp-admin in system:kcp:admin", bob, map[string]string{"Impersonate-User": "kcp-admin", "Impersonate-Group": "system:kcp:admin"}, http.StatusForbidden},
		{"bob in system:kcp:logical-cluster-admin", bob, map[string]string{"Impersonate-User": "bob", "Impersonate-Group": "system:kcp:logical-cluster-admin"}, http.StatusForbidden},
		{"bob in system:serviceaccounts", bob, map[string]string{"Impersonate-User": "bob", "Impersonate-Group": "system:serviceaccounts"}, http.StatusForbidden},
		{"bob as the global name of a service account of alice's org", bob,
			map[string]string{"Impersonate-User": "system:kcp:serviceaccount:" + tn.alice.Cluster + ":default:default"}, http.StatusForbidden},
		{"bob as a service account of alice's org", bob, map[string]string{"Impersonate-User": "system:serviceaccount:default:default",
			extraHeader("authentication.kubernetes.io/cluster-name"): tn.alice.Cluster}, http.StatusForbidden},
		{"bob with a warrant for alice", bob, map[string]string{"Impersonate-User": "bob", extraHeader("authorization.kcp.io/warrant"): warrant}, http.StatusForbidden},
		{"bob scoped to alice's org", bob, map[string]string{"Impersonate-User": "bob", extraHeader("authentication.kcp.io/scopes"): "cluster:" + tn.alice.Cluster}, http.StatusForbidden},
		{"bob with the review's cluster of alice's org", bob, map[string]string{"Impersonate-User": "bob", extraHeader("authorization.kcp.io/cluster-name"): tn.alice.Cluster}, http.StatusForbidden},
		// What stays allowed: ordinary identities in his own workspace.
		{"bob as bob in group team", bob, map[string]string{"Impersonate-User": "bob", "Impersonate-Group": "team"}, http.StatusCreated},
		{"bob as a service account of his org", bob, map[string]string{"Impersonate-User": "system:serviceaccount:default:default",
			extraHeader("authentication.kubernetes.io/cluster-name"): tn.bob.Cluster}, http.StatusCreated},
		{"bob with an extra of his own", bob, map[string]string{"Impersonate-User": "bob", extraHeader("example.com/team"): "blue"}, http.StatusCreated},
		{"system:masters as bob in system:masters", s.AdminToken(t), map[string]string{"Impersonate-User": "bob", "Impersonate-Group": "system:masters"}, http.StatusCreated},
	} {
		code, body := request(t, s, tc.token, "POST", path, []byte(selfSubjectReview), tc.headers)
		if code != tc.want {
			t.Errorf("%s: SelfSubjectReview in %s answered %d, want %d: %s", tc.what, tn.bob.Path, code, tc.want, body)
			continue
		}
		if code == http.StatusForbidden {
			var st struct {
				Kind   string `json:"kind"`
				Reason string `json:"reason"`
			}
			if err := json.Unmarshal([]byte(body), &st); err != nil || st.Kind != "Status" || st.Reason != "Forbidden" {
				t.Errorf("%s: want a Forbidden Status, got %s", tc.what, body)
			}
		}
	}

	// The same refusal through kubectl's own impersonation flags.
	out, stderr, err := tn.bobK.RunErr(t, "auth", "whoami", "--as=bob", "--as-group=system:masters")
	framework.RequireFails(t, out, stderr, err, "kubectl auth whoami --as=bob --as-group=system:masters by bob", "permission")
	framework.RequireContains(t, tn.bobK.Run(t, "auth", "whoami", "--as=bob", "--as-group=team", "-o", "jsonpath={.status.userInfo.groups}"),
		"team", "bob impersonating himself in group team in his org")
}
