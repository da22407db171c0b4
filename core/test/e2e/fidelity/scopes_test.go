package fidelity

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestImpersonationScope checks kcp's scoping of impersonation: the
// impersonated user carries authentication.kcp.io/scopes: cluster:<the
// workspace's cluster> (SelfSubjectReview shows it), and a user scoped to
// another cluster is only authenticated here, whatever RBAC grants it.
func TestImpersonationScope(t *testing.T) {
	t.Parallel()
	s := server(t)
	org := s.CreateOrg(t, "scopes")
	ws := s.CreateWorkspaces(t, org.Path, "team")[0]
	k := s.KubectlFor(ws.Path)
	k.Run(t, "create", "clusterrolebinding", "bob-admin", "--clusterrole=cluster-admin", "--user=bob")
	s.KubectlFor(org.Path).Run(t, "create", "clusterrolebinding", "bob-access", "--clusterrole=system:kcp:workspace:access", "--user=bob")

	var review struct {
		Status struct {
			UserInfo struct {
				Username string              `json:"username"`
				Extra    map[string][]string `json:"extra"`
			} `json:"userInfo"`
		} `json:"status"`
	}
	if err := json.Unmarshal([]byte(k.Run(t, "auth", "whoami", "--as=bob", "-o", "json")), &review); err != nil {
		t.Fatal(err)
	}
	framework.RequireEqual(t, review.Status.UserInfo.Username, "bob", "SelfSubjectReview username when impersonating bob")
	framework.RequireEqual(t, framework.Compact(review.Status.UserInfo.Extra["authentication.kcp.io/scopes"]), `["cluster:`+ws.Cluster+`"]`,
		"SelfSubjectReview extra authentication.kcp.io/scopes when impersonating bob in "+ws.Path)
	k.Run(t, "get", "configmaps", "-n", "default", "--as=bob")

	// bob scoped to another cluster: only authenticated here.
	get := func(extraScope string) int {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, "GET", s.ClusterURL(ws.Path)+"/api/v1/namespaces/default/configmaps", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+s.AdminToken(t))
		req.Header.Set("Impersonate-User", "bob")
		if extraScope != "" {
			req.Header.Set("Impersonate-Extra-authentication.kcp.io%2fscopes", extraScope)
		}
		resp, err := s.HTTPClient(t).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode
	}
	framework.RequireEqual(t, get(""), 200, "listing configmaps as bob (impersonated, scoped to this workspace)")
	framework.RequireEqual(t, get("cluster:elsewhere"), 403, "listing configmaps as bob scoped to another cluster")
}

// TestWarrantsAndForeignServiceAccounts checks kcp's RBAC subjects through
// SubjectAccessReviews: a user holding a warrant for bob has bob's
// permissions; a ServiceAccount subject matches the service account of
// this workspace only, not a same-named one of another workspace, which
// only the global name system:kcp:serviceaccount:<cluster>:<ns>:<name>
// matches.
func TestWarrantsAndForeignServiceAccounts(t *testing.T) {
	t.Parallel()
	s := server(t)
	org := s.CreateOrg(t, "warrants")
	ws := s.CreateWorkspaces(t, org.Path, "team", "elsewhere")
	team, elsewhere := ws[0], ws[1]
	k := s.KubectlFor(team.Path)
	k.Run(t, "create", "clusterrolebinding", "bob-admin", "--clusterrole=cluster-admin", "--user=bob")
	k.Run(t, "create", "clusterrolebinding", "sa-admin", "--clusterrole=cluster-admin", "--serviceaccount=default:robot")

	sar := func(user string, groups []string, extra map[string]authorizationv1.ExtraValue) bool {
		t.Helper()
		body := framework.MustJSON(t, &authorizationv1.SubjectAccessReview{
			TypeMeta: metav1TypeMeta("SubjectAccessReview"),
			Spec: authorizationv1.SubjectAccessReviewSpec{User: user, Groups: groups, Extra: extra,
				ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "list", Resource: "configmaps", Namespace: "default", Version: "v1"}},
		})
		r := s.AdminRequest(t, "POST", "/clusters/"+team.Path+"/apis/authorization.k8s.io/v1/subjectaccessreviews", body)
		framework.RequireCode(t, r, "SubjectAccessReview", 201)
		var out authorizationv1.SubjectAccessReview
		r.JSON(t, &out)
		return out.Status.Allowed
	}
	authn := []string{"system:authenticated"}
	warrant := string(framework.MustJSON(t, map[string]any{"user": "bob", "groups": authn}))
	framework.RequireEqual(t, sar("nobody", authn, nil), false, "nobody listing configmaps")
	framework.RequireEqual(t, sar("nobody", authn, map[string]authorizationv1.ExtraValue{"authorization.kcp.io/warrant": {warrant}}), true,
		"nobody with a warrant for bob listing configmaps")

	saGroups := []string{"system:serviceaccounts", "system:serviceaccounts:default", "system:authenticated"}
	of := func(cluster string) map[string]authorizationv1.ExtraValue {
		return map[string]authorizationv1.ExtraValue{"authentication.kubernetes.io/cluster-name": {cluster}}
	}
	const robot = "system:serviceaccount:default:robot"
	framework.RequireEqual(t, sar(robot, saGroups, of(team.Cluster)), true, "the workspace's own ServiceAccount default/robot (bound by kind ServiceAccount)")
	framework.RequireEqual(t, sar(robot, saGroups, of(elsewhere.Cluster)), false, "a same-named ServiceAccount of another workspace")
	k.Run(t, "create", "clusterrolebinding", "foreign-robot", "--clusterrole=cluster-admin",
		"--user=system:kcp:serviceaccount:"+elsewhere.Cluster+":default:robot")
	framework.RequireEqual(t, sar(robot, saGroups, of(elsewhere.Cluster)), true,
		"the other workspace's ServiceAccount, bound by its global name system:kcp:serviceaccount:<cluster>:default:robot")
}

func metav1TypeMeta(kind string) metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: "authorization.k8s.io/v1", Kind: kind}
}
