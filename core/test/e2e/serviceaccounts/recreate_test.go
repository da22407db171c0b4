package serviceaccounts

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestTokenOfDeletedWorkspace: as in kcp, a service-account token is bound
// to its logical cluster (and its ServiceAccount's UID): once its
// workspace is deleted and a workspace of the same name (a new logical
// cluster) is created with a same-named ServiceAccount, the old token is
// refused there (401, and a TokenReview says not authenticated), while a
// token of the new workspace works.
func TestTokenOfDeletedWorkspace(t *testing.T) {
	s := server(t)
	org := s.CreateOrg(t, "sa-recreate")
	setup := func() (string, string) {
		ws := s.CreateWorkspaces(t, org.Path, "again")[0]
		k := s.KubectlFor(ws.Cluster)
		k.Run(t, "create", "serviceaccount", "robot", "-n", "default")
		k.Run(t, "create", "clusterrolebinding", "robot-view", "--clusterrole=view", "--serviceaccount=default:robot")
		return ws.Cluster, strings.TrimSpace(k.Run(t, "create", "token", "robot", "-n", "default"))
	}
	review := func(token string) authenticationv1.TokenReviewStatus {
		t.Helper()
		body, _ := json.Marshal(authenticationv1.TokenReview{TypeMeta: metav1.TypeMeta{APIVersion: "authentication.k8s.io/v1", Kind: "TokenReview"},
			Spec: authenticationv1.TokenReviewSpec{Token: token}})
		res := s.AdminRequest(t, "POST", "/clusters/"+org.Path+":again/apis/authentication.k8s.io/v1/tokenreviews", body)
		framework.RequireCode(t, res, "TokenReview", 201)
		var tr authenticationv1.TokenReview
		res.JSON(t, &tr)
		return tr.Status
	}
	path := org.Path + ":again"
	oldCluster, oldToken := setup()
	framework.RequireEqual(t, tokenKubectl(t, s, path, oldToken).Run(t, "get", "serviceaccount", "robot", "-n", "default", "-o", "jsonpath={.metadata.name}"),
		"robot", "robot reading itself with its token")
	if st := review(oldToken); !st.Authenticated {
		t.Fatalf("TokenReview of robot's token in its workspace: not authenticated (%s)", st.Error)
	}

	s.KubectlFor(org.Path).Run(t, "delete", "workspace", "again", "--wait=false")
	framework.Eventually(t, time.Minute, 250*time.Millisecond, "Workspace again to be gone", func() (bool, string) {
		_, stderr, err := s.KubectlFor(org.Path).RunErr(t, "get", "workspace", "again")
		return err != nil && strings.Contains(stderr, "NotFound"), stderr
	})
	newCluster, newToken := setup()
	if newCluster == oldCluster {
		t.Fatalf("the re-created workspace has the logical cluster %s of the deleted one", oldCluster)
	}

	requireUnauthorized(t, tokenKubectl(t, s, path, oldToken), "the token of the deleted workspace's robot in the re-created workspace",
		"get", "serviceaccount", "robot", "-n", "default")
	if st := review(oldToken); st.Authenticated {
		t.Errorf("TokenReview of the deleted workspace's token: authenticated as %s, want not", st.User.Username)
	}
	framework.RequireEqual(t, tokenKubectl(t, s, path, newToken).Run(t, "get", "serviceaccount", "robot", "-n", "default", "-o", "jsonpath={.metadata.name}"),
		"robot", "the new robot reading itself with its own token")
}
