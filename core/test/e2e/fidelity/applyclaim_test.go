package fidelity

import (
	"testing"
	"time"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestServerSideApplyThroughClaimNeedsCreate checks, as kcp's e2e does,
// that a provider's server-side apply through the APIExport virtual
// workspace that would create a claimed object is refused (403) while the
// claim allows patch but not create, and works once both the export and
// the binding name create; what it creates must match the claim's
// selector.
func TestServerSideApplyThroughClaimNeedsCreate(t *testing.T) {
	t.Parallel()
	c := newClaimsSetup(t, "applyclaim")
	pk, ck := c.s.KubectlFor(c.provider.Path), c.s.KubectlFor(c.consumer.Path)
	setVerbs := func(verbs string) {
		pk.Run(t, "patch", "apiexport", scopedExport, "--type=json", "-p", `[{"op":"replace","path":"/spec/permissionClaims/0/verbs","value":`+verbs+`}]`)
		ck.Run(t, "patch", "apibinding", "sprockets", "--type=json", "-p", `[{"op":"replace","path":"/spec/permissionClaims/0/verbs","value":`+verbs+`}]`)
	}
	setVerbs(`["get","list","watch","patch"]`)
	ck.Run(t, "create", "configmap", "existing")
	ck.Run(t, "label", "configmap", "existing", "app=picked")

	base := "/clusters/" + c.consumer.Cluster + "/api/v1/namespaces/default/configmaps/"
	apply := func(name string) *framework.Response {
		return c.s.RequestURL(t, c.token, "PATCH", c.url+base+name+"?fieldManager=provider", "application/apply-patch+yaml",
			[]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"`+name+`","namespace":"default","labels":{"app":"picked"}},"data":{"by":"provider"}}`))
	}
	// Patch is allowed: applying to an existing object works.
	framework.Eventually(t, 30*time.Second, 250*time.Millisecond, "server-side apply to an existing configmap (patch claimed)", func() (bool, string) {
		r := apply("existing")
		return r.Err == nil && r.Code == 200, r.String()
	})
	r := apply("applied")
	framework.RequireCode(t, r, "server-side apply creating a configmap while the claim has no create", 403)
	framework.RequireContains(t, r.String(), `cannot create resource \"configmaps\"`, "the refusal")
	_, stderr, err := ck.RunErr(t, "get", "configmap", "applied")
	framework.RequireContains(t, stderr, "not found", "the configmap the refused apply would have created (err "+errString(err)+")")

	setVerbs(`["get","list","watch","patch","create"]`)
	framework.Eventually(t, 30*time.Second, 250*time.Millisecond, "server-side apply creating a configmap once create is claimed", func() (bool, string) {
		r := apply("applied")
		return r.Err == nil && r.Code == 201, r.String()
	})
	framework.RequireEqual(t, ck.Run(t, "get", "configmap", "applied", "-o", "jsonpath={.data.by}"), "provider", "data of the applied configmap")
	// What an apply creates must still match the claim's selector.
	r = c.s.RequestURL(t, c.token, "PATCH", c.url+base+"outside?fieldManager=provider", "application/apply-patch+yaml",
		[]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"outside","namespace":"default","labels":{"app":"other"}}}`))
	framework.RequireCode(t, r, "server-side apply creating a configmap outside the claim's selector", 403)
	framework.RequireContains(t, r.String(), "protected label app must have value picked", "the refusal")
	_, stderr, err = ck.RunErr(t, "get", "configmap", "outside")
	framework.RequireContains(t, stderr, "not found", "the configmap outside the selector (err "+errString(err)+")")
}

func errString(err error) string {
	if err == nil {
		return "nil"
	}
	return err.Error()
}
