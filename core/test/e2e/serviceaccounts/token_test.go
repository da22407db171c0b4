package serviceaccounts

import (
	"strings"
	"testing"
	"time"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestTokenRequestPerWorkspace checks `kubectl create token`: the token
// authenticates as the ServiceAccount in its own workspace, where RBAC
// applies to it, is refused (401) in another workspace even when that
// one has a same-named ServiceAccount, and stops working once its
// ServiceAccount is deleted.
func TestTokenRequestPerWorkspace(t *testing.T) {
	s := server(t)
	org := s.CreateOrg(t, "sa-token")
	wss := s.CreateWorkspaces(t, org.Path, "a", "b")
	a, b := s.KubectlFor(wss[0].Path), s.KubectlFor(wss[1].Path)
	for _, k := range []*framework.Kubectl{a, b} {
		k.Run(t, "create", "namespace", "team")
		k.Run(t, "create", "serviceaccount", "robot", "-n", "team")
		k.Run(t, "create", "configmap", "cfg", "-n", "team", "--from-literal=k=v")
		k.Run(t, "create", "role", "cm-reader", "-n", "team", "--verb=get,list", "--resource=configmaps")
		k.Run(t, "create", "rolebinding", "robot-cm-reader", "-n", "team", "--role=cm-reader", "--serviceaccount=team:robot")
	}
	tokenA := strings.TrimSpace(a.Run(t, "create", "token", "robot", "-n", "team"))
	tokenB := strings.TrimSpace(b.Run(t, "create", "token", "robot", "-n", "team", "--duration=2h", "--audience=https://kubernetes.default.svc"))
	asA, asAinB := tokenKubectl(t, s, wss[0].Path, tokenA), tokenKubectl(t, s, wss[1].Path, tokenA)

	// In its own workspace: who it is, what RBAC allows and denies.
	out := asA.Run(t, "auth", "whoami", "-o", "jsonpath={.status.userInfo.username} {.status.userInfo.groups}")
	framework.RequireContains(t, out, "system:serviceaccount:team:robot", "kubectl auth whoami with robot's token")
	framework.RequireContains(t, out, "system:serviceaccounts:team", "robot's groups")
	framework.RequireEqual(t, strings.TrimSpace(asA.Run(t, "get", "configmap", "cfg", "-n", "team", "-o", "jsonpath={.data.k}")), "v",
		"robot reading a configmap its Role allows")
	out, stderr, err := asA.RunErr(t, "create", "configmap", "sneaky", "-n", "team")
	framework.RequireFails(t, out, stderr, err, "robot creating a configmap (its Role only reads)", "forbidden", "system:serviceaccount:team:robot")
	out, stderr, err = asA.RunErr(t, "get", "secrets", "-n", "team")
	framework.RequireFails(t, out, stderr, err, "robot listing secrets", "forbidden")

	// Without a workspace in the URL, the token's own workspace, as in kcp.
	framework.RequireEqual(t, strings.TrimSpace(tokenKubectl(t, s, "", tokenA).Run(t, "get", "configmap", "cfg", "-n", "team", "-o", "jsonpath={.data.k}")),
		"v", "robot reading a configmap through the base URL (no /clusters/ in it)")

	// In another workspace, with a same-named ServiceAccount bound to the
	// same Role there: 401.
	requireUnauthorized(t, asAinB, "robot of a using its token in b", "get", "configmaps", "-n", "team")
	requireUnauthorized(t, tokenKubectl(t, s, wss[1].Cluster, tokenA), "robot of a using its token in b's logical cluster", "get", "configmaps", "-n", "team")
	requireUnauthorized(t, tokenKubectl(t, s, org.Path, tokenA), "robot of a using its token in the parent workspace", "get", "namespaces")
	// b's own token works in b.
	framework.RequireEqual(t, strings.TrimSpace(tokenKubectl(t, s, wss[1].Path, tokenB).Run(t, "get", "configmap", "cfg", "-n", "team", "-o", "jsonpath={.data.k}")),
		"v", "robot of b reading a configmap in b")

	// kube's bounds on the lifetime.
	out, stderr, err = a.RunErr(t, "create", "token", "robot", "-n", "team", "--duration=1m")
	framework.RequireFails(t, out, stderr, err, "a token for one minute", "less than 10 minutes")
	out, stderr, err = a.RunErr(t, "create", "token", "nobody", "-n", "team")
	framework.RequireFails(t, out, stderr, err, "a token of a missing ServiceAccount", "not found")
	// A token for another audience is no API token.
	other := strings.TrimSpace(a.Run(t, "create", "token", "robot", "-n", "team", "--audience=vault"))
	requireUnauthorized(t, tokenKubectl(t, s, wss[0].Path, other), "a token for audience vault", "get", "configmaps", "-n", "team")

	// A token bound to a Secret dies with the Secret.
	a.Run(t, "create", "secret", "generic", "binder", "-n", "team")
	bound := strings.TrimSpace(a.Run(t, "create", "token", "robot", "-n", "team", "--bound-object-kind=Secret", "--bound-object-name=binder"))
	asBound := tokenKubectl(t, s, wss[0].Path, bound)
	framework.RequireEqual(t, strings.TrimSpace(asBound.Run(t, "get", "configmap", "cfg", "-n", "team", "-o", "jsonpath={.data.k}")), "v",
		"robot reading with a token bound to Secret binder")
	a.Run(t, "delete", "secret", "binder", "-n", "team")
	eventuallyUnauthorized(t, asBound, "the token bound to Secret binder to be refused after deleting binder", "get", "configmaps", "-n", "team")

	// Deleting the ServiceAccount ends its tokens.
	a.Run(t, "delete", "serviceaccount", "robot", "-n", "team")
	eventuallyUnauthorized(t, asA, "robot's token to be refused after deleting robot", "get", "configmaps", "-n", "team")
	// Re-creating a same-named ServiceAccount does not revive them.
	a.Run(t, "create", "serviceaccount", "robot", "-n", "team")
	time.Sleep(time.Second)
	requireUnauthorized(t, asA, "the old token of a re-created robot", "get", "configmaps", "-n", "team")
}

// TestLegacyTokenSecret checks the token controller: a Secret of type
// kubernetes.io/service-account-token gets a token, the CA and the
// namespace; the token works in its workspace only and stops when the
// Secret is deleted.
func TestLegacyTokenSecret(t *testing.T) {
	s := server(t)
	org := s.CreateOrg(t, "sa-legacy")
	wss := s.CreateWorkspaces(t, org.Path, "a", "b")
	a := s.KubectlFor(wss[0].Path)
	a.Run(t, "create", "namespace", "team")
	a.Run(t, "create", "serviceaccount", "robot", "-n", "team")
	a.RunStdin(t, `apiVersion: v1
kind: Secret
metadata:
  name: robot-token
  namespace: team
  annotations:
    kubernetes.io/service-account.name: robot
type: kubernetes.io/service-account-token
`, "apply", "-f", "-")
	var token string
	framework.Eventually(t, 30*time.Second, 250*time.Millisecond, "the token controller to fill robot-token", func() (bool, string) {
		out, stderr, err := a.RunErr(t, "get", "secret", "robot-token", "-n", "team", "-o", "jsonpath={.data.token}")
		token = out
		return err == nil && out != "", stderr
	})
	token = decode(t, token)
	framework.RequireEqual(t, decode(t, a.Run(t, "get", "secret", "robot-token", "-n", "team", "-o", `jsonpath={.data.ca\.crt}`)), serverCA(t, s),
		"ca.crt of the token Secret")
	framework.RequireEqual(t, decode(t, a.Run(t, "get", "secret", "robot-token", "-n", "team", "-o", "jsonpath={.data.namespace}")), "team",
		"namespace of the token Secret")

	asA := tokenKubectl(t, s, wss[0].Path, token)
	framework.RequireContains(t, asA.Run(t, "auth", "whoami", "-o", "jsonpath={.status.userInfo.username}"), "system:serviceaccount:team:robot",
		"kubectl auth whoami with the legacy token")
	requireUnauthorized(t, tokenKubectl(t, s, wss[1].Path, token), "the legacy token of a in b", "auth", "whoami")

	a.Run(t, "delete", "secret", "robot-token", "-n", "team")
	eventuallyUnauthorized(t, asA, "the legacy token to be refused after deleting its Secret", "auth", "whoami")

	// A token Secret of a ServiceAccount that goes is deleted with it.
	a.RunStdin(t, `apiVersion: v1
kind: Secret
metadata:
  name: robot-token-2
  namespace: team
  annotations:
    kubernetes.io/service-account.name: robot
type: kubernetes.io/service-account-token
`, "apply", "-f", "-")
	framework.Eventually(t, 30*time.Second, 250*time.Millisecond, "robot-token-2 to be filled", func() (bool, string) {
		out, _, err := a.RunErr(t, "get", "secret", "robot-token-2", "-n", "team", "-o", "jsonpath={.data.token}")
		return err == nil && out != "", out
	})
	a.Run(t, "delete", "serviceaccount", "robot", "-n", "team")
	framework.Eventually(t, 30*time.Second, 250*time.Millisecond, "robot-token-2 to be deleted with robot", func() (bool, string) {
		out, stderr, err := a.RunErr(t, "get", "secret", "robot-token-2", "-n", "team")
		return err != nil && strings.Contains(stderr, "NotFound"), out + stderr
	})
}
