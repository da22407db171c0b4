package e2e

// Attacks of one tenant on another through what the security-operator and
// the webhook trust (issue 28): bob founds his organization, reads every
// public name and id, and writes whatever his RBAC allows there. Each test
// fails on the operator that trusted what bob wrote.

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	corev1alpha1 "github.com/meshplane/meshplane/apis/core/v1alpha1"
	"github.com/meshplane/meshplane/apis/fga"
	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// tenantOrg is an organization founded by a demo user.
type tenantOrg struct {
	name, path string
	// orgsCluster is the logical cluster of root:orgs (the Account's
	// origin), cluster the organization's own.
	orgsCluster, cluster string
	storeID              string
}

// foundOrg has user found an organization and waits for it and its Store.
func foundOrg(t *testing.T, s *framework.Server, user, prefix string) tenantOrg {
	t.Helper()
	name := framework.UniqueName(prefix)
	k := s.KubectlAsUser(t, user, "root:orgs")
	k.RunStdin(t, accountYAML(name, "org", user), "create", "-f", "-")
	t.Cleanup(func() { _, _, _ = s.KubectlFor("root:orgs").RunErr(t, "delete", "account", name, "--wait=false") })
	waitAccountReady(t, k, name)
	st := waitStore(t, adminClient(t, s, "root:orgs"), name)
	info := accountInfoOf(t, s, "root:orgs:"+name)
	return tenantOrg{name: name, path: "root:orgs:" + name, orgsCluster: info.Spec.Account.OriginClusterID,
		cluster: info.Spec.Account.GeneratedClusterID, storeID: st.Status.StoreID}
}

// userClient is a user's client in a workspace.
func userClient(t *testing.T, s *framework.Server, user, path string) client.Client {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := corev1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(s.UserRESTConfig(t, user, path), client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// ownerOf is the tuple making user owner of the organization's Account.
func ownerOf(o tenantOrg, user string) corev1alpha1.Tuple {
	return corev1alpha1.Tuple{Object: fga.AccountObject(o.orgsCluster, o.name), Relation: "owner", User: fga.UserID(user)}
}

// TestAttackModelIntoAnotherOrgsStore (takeover 1): in his organization bob
// applies AuthorizationModels naming alice's Store (by path and by
// cluster id, one also claiming root:orgs' cluster in its kcp.io/cluster
// annotation) with a tuple making him owner of alice's organization. They
// are left out with Ready=False OtherOrganization; alice's store gets
// neither module nor tuple. bob's model for his own Store, with the same
// tuple, is written into his store only: stores are per organization and
// alice's workspaces are answered from hers.
func TestAttackModelIntoAnotherOrgsStore(t *testing.T) {
	s := platform(t)
	f := fgaFor(t)
	alice := foundOrg(t, s, "alice", "victim")
	bob := foundOrg(t, s, "bob", "attacker")
	bobs := userClient(t, s, "bob", bob.path)
	steal := ownerOf(alice, "bob")

	attacks := []*corev1alpha1.AuthorizationModel{
		authorizationModel("takeover-path", alice.name, "root:orgs", "module takeover1\n\ntype bob_takeover_path\n"),
		authorizationModel("takeover-cluster", alice.name, alice.orgsCluster, "module takeover2\n\ntype bob_takeover_cluster\n"),
	}
	attacks[1].Annotations = map[string]string{"kcp.io/cluster": alice.orgsCluster}
	own := authorizationModel("own", bob.name, "root:orgs", "module own\n\ntype bob_own\n")
	for _, m := range append(attacks, own) {
		m.Spec.Tuples = []corev1alpha1.Tuple{steal}
		if err := bobs.Create(ctxFor(t), m); err != nil {
			t.Fatalf("bob creating AuthorizationModel %s in his organization: %v", m.Name, err)
		}
	}
	for _, m := range attacks {
		c := waitModelCondition(t, bobs, m.Name, metav1.ConditionFalse)
		if c.Reason != corev1alpha1.ReasonOtherOrganization || !strings.Contains(c.Message, "only to the Store of its own organization") {
			t.Errorf("AuthorizationModel %s naming alice's Store: %s: %s, want OtherOrganization", m.Name, c.Reason, c.Message)
		}
	}
	// bob's own model is in his store, with its tuple.
	waitModelCondition(t, bobs, own.Name, metav1.ConditionTrue)
	checkEventually(t, f, bob.storeID, steal, true)

	// alice's store: re-read after the attacks were refused.
	orgs := adminClient(t, s, "root:orgs")
	st := waitStore(t, orgs, alice.name)
	model, err := f.Model(ctxFor(t), st.Status.StoreID, st.Status.AuthorizationModelID)
	if err != nil {
		t.Fatal(err)
	}
	for _, typ := range []string{"bob_takeover_path", "bob_takeover_cluster", "bob_own"} {
		if hasType(model, typ) {
			t.Errorf("bob's type %s is in alice's model", typ)
		}
	}
	if ok, err := f.Check(ctxFor(t), alice.storeID, steal); err != nil || ok {
		t.Fatalf("bob owner of alice's organization in her store: %v, %v", ok, err)
	}
	// The webhook answers alice's workspace from her store, never bob's.
	if info := accountInfoOf(t, s, alice.path); info.Spec.FGA.Store.ID != alice.storeID || alice.storeID == bob.storeID {
		t.Fatalf("alice's AccountInfo names store %s (hers %s, bob's %s)", info.Spec.FGA.Store.ID, alice.storeID, bob.storeID)
	}
}

// TestAttackStoreStatusStoreID (takeover 2): bob makes a Store in his
// organization, sets its status.storeId to alice's store id (readable in
// her AccountInfo) and adds a tuple making himself her owner. The Store is
// not turned into an OpenFGA store (Ready=False NotOrganizationStore),
// nothing is written into alice's store, and deleting bob's Store leaves
// her store alone. The platform's own Stores ignore a status.storeId that
// names another Store's store and go back to their own.
func TestAttackStoreStatusStoreID(t *testing.T) {
	s := platform(t)
	f := fgaFor(t)
	alice := foundOrg(t, s, "alice", "victim")
	bob := foundOrg(t, s, "bob", "attacker")
	bobs := userClient(t, s, "bob", bob.path)
	steal := ownerOf(alice, "bob")

	fake := &corev1alpha1.Store{ObjectMeta: metav1.ObjectMeta{Name: "fake"},
		Spec: corev1alpha1.StoreSpec{CoreModule: fga.CoreModule, Tuples: []corev1alpha1.Tuple{steal}}}
	if err := bobs.Create(ctxFor(t), fake); err != nil {
		t.Fatalf("bob creating a Store in his organization: %v", err)
	}
	// bob writes alice's store id into the status, then changes the spec
	// so the operator looks again.
	framework.Eventually(t, 30*time.Second, 250*time.Millisecond, "bob's status.storeId to be alice's", func() (bool, string) {
		cur := &corev1alpha1.Store{}
		if err := bobs.Get(ctxFor(t), client.ObjectKey{Name: "fake"}, cur); err != nil {
			return false, err.Error()
		}
		cur.Status.StoreID = alice.storeID
		if err := bobs.Status().Update(ctxFor(t), cur); err != nil {
			return false, err.Error()
		}
		return true, ""
	})
	var gen int64
	framework.Eventually(t, 30*time.Second, 250*time.Millisecond, "bob's Store spec to change", func() (bool, string) {
		cur := &corev1alpha1.Store{}
		if err := bobs.Get(ctxFor(t), client.ObjectKey{Name: "fake"}, cur); err != nil {
			return false, err.Error()
		}
		cur.Spec.Tuples = append(cur.Spec.Tuples, corev1alpha1.Tuple{Object: steal.Object, Relation: "member", User: fga.UserID("bob")})
		if err := bobs.Update(ctxFor(t), cur); err != nil {
			return false, err.Error()
		}
		gen = cur.Generation
		return true, ""
	})
	framework.Eventually(t, readyTimeout, 500*time.Millisecond, "the operator to look at bob's changed Store", func() (bool, string) {
		cur := &corev1alpha1.Store{}
		if err := bobs.Get(ctxFor(t), client.ObjectKey{Name: "fake"}, cur); err != nil {
			return false, err.Error()
		}
		c := meta.FindStatusCondition(cur.Status.Conditions, corev1alpha1.ConditionReady)
		return c != nil && c.ObservedGeneration >= gen, framework.Compact(cur.Status)
	})
	cur := &corev1alpha1.Store{}
	if err := bobs.Get(ctxFor(t), client.ObjectKey{Name: "fake"}, cur); err != nil {
		t.Fatal(err)
	}
	if c := meta.FindStatusCondition(cur.Status.Conditions, corev1alpha1.ConditionReady); c.Reason != corev1alpha1.ReasonNotOrganizationStore {
		t.Errorf("bob's Store: Ready %s %s: %s, want NotOrganizationStore", c.Status, c.Reason, c.Message)
	}
	for _, rel := range []string{"owner", "member"} {
		tu := corev1alpha1.Tuple{Object: steal.Object, Relation: rel, User: steal.User}
		if ok, err := f.Check(ctxFor(t), alice.storeID, tu); err != nil || ok {
			t.Errorf("bob %s of alice's organization in her store: %v, %v", rel, ok, err)
		}
	}

	// Deleting bob's Store leaves alice's store and grants.
	if err := bobs.Delete(ctxFor(t), cur); err != nil {
		t.Fatal(err)
	}
	waitGone(t, s.KubectlAsUser(t, "bob", bob.path), "bob's Store", "get", "stores", "fake")
	if _, ok, err := f.StoreName(ctxFor(t), alice.storeID); err != nil || !ok {
		t.Fatalf("alice's OpenFGA store after bob deleted his Store: exists %v, %v", ok, err)
	}
	checkEventually(t, f, alice.storeID, ownerOf(alice, "alice"), true)

	// A platform Store whose status names another organization's store
	// (as only an admin could write it) goes back to its own.
	orgs := adminClient(t, s, "root:orgs")
	framework.Eventually(t, 30*time.Second, 250*time.Millisecond, "bob's org Store's status.storeId to be alice's", func() (bool, string) {
		st := &corev1alpha1.Store{}
		if err := orgs.Get(ctxFor(t), client.ObjectKey{Name: bob.name}, st); err != nil {
			return false, err.Error()
		}
		st.Status.StoreID = alice.storeID
		if err := orgs.Status().Update(ctxFor(t), st); err != nil {
			return false, err.Error()
		}
		// An annotation wakes the operator (status-only changes do not).
		st.Annotations["e2e.meshplane.dev/poke"] = "1"
		if err := orgs.Update(ctxFor(t), st); err != nil {
			return false, err.Error()
		}
		return true, ""
	})
	framework.Eventually(t, readyTimeout, 500*time.Millisecond, "bob's org Store to be back on its own store", func() (bool, string) {
		st := &corev1alpha1.Store{}
		if err := orgs.Get(ctxFor(t), client.ObjectKey{Name: bob.name}, st); err != nil {
			return false, err.Error()
		}
		return st.Status.StoreID == bob.storeID, framework.Compact(st.Status)
	})
	if ok, err := f.Check(ctxFor(t), alice.storeID, ownerOf(bob, "bob")); err != nil || ok {
		t.Errorf("bob's organization's owner tuple was written into alice's store: %v, %v", ok, err)
	}
	checkEventually(t, f, bob.storeID, ownerOf(bob, "bob"), true)
}

// TestDeletedOrgStoreAnswersNothing: deleting an organization revokes its
// tuples before its OpenFGA store is deleted, so a Check on the deleted
// store no longer answers allowed (OpenFGA's delete is soft: without the
// revocation it still did).
func TestDeletedOrgStoreAnswersNothing(t *testing.T) {
	s := platform(t)
	f := fgaFor(t)
	o := foundOrg(t, s, "alice", "gone")
	owner := ownerOf(o, "alice")
	checkEventually(t, f, o.storeID, owner, true)
	s.KubectlFor("root:orgs").Run(t, "delete", "account", o.name, "--wait=false")
	framework.Eventually(t, readyTimeout, 500*time.Millisecond, "OpenFGA store "+o.storeID+" to be deleted", func() (bool, string) {
		_, ok, err := f.StoreName(ctxFor(t), o.storeID)
		return err == nil && !ok, fmt.Sprintf("exists %v, %v", ok, err)
	})
	if ok, err := f.Check(ctxFor(t), o.storeID, owner); err != nil || ok {
		t.Fatalf("Check on the deleted store of %s: allowed %v, %v", o.name, ok, err)
	}
}

// TestAttackAccountInfoIsSystemOnly: AccountInfo is what the webhook and
// the operators trust for a workspace; its organization's admin (bob, who
// founded it) may read it, not write it, not even dry-run, and neither may
// a ServiceAccount of his named like the operator's.
func TestAttackAccountInfoIsSystemOnly(t *testing.T) {
	s := platform(t)
	alice := foundOrg(t, s, "alice", "victim")
	bob := foundOrg(t, s, "bob", "attacker")
	k := s.KubectlAsUser(t, "bob", bob.path)
	if _, err := jsonpath(t, k, "{.spec.fga.store.id}", "get", "accountinfo", "account"); err != nil {
		t.Fatalf("bob reading his AccountInfo: %v", err)
	}
	patch := fmt.Sprintf(`{"spec":{"fga":{"store":{"id":%q}}}}`, alice.storeID)
	refused := func(what string, errOut string, err error) {
		t.Helper()
		if err == nil || !strings.Contains(errOut, "AccountInfo is written by the platform only") {
			t.Errorf("%s: err %v, stderr %q; want it refused as the platform's", what, err, errOut)
		}
	}
	_, errOut, err := k.RunErr(t, "patch", "accountinfo", "account", "--type=merge", "-p", patch, "--dry-run=server")
	refused("bob patching his AccountInfo's store id (dry run)", errOut, err)
	_, errOut, err = k.RunErr(t, "patch", "accountinfo", "account", "--type=merge", "-p", patch)
	refused("bob patching his AccountInfo's store id", errOut, err)
	_, errOut, err = k.RunErr(t, "delete", "accountinfo", "account", "--dry-run=server")
	refused("bob deleting his AccountInfo (dry run)", errOut, err)
	other := &corev1alpha1.AccountInfo{TypeMeta: metav1.TypeMeta{APIVersion: corev1alpha1.SchemeGroupVersion.String(), Kind: "AccountInfo"},
		ObjectMeta: metav1.ObjectMeta{Name: "other"}, Spec: accountInfoOf(t, s, bob.path).Spec}
	other.Spec.FGA.Store.ID = alice.storeID
	raw, _ := json.Marshal(other)
	_, errOut, err = k.RunStdinErr(t, string(raw), "create", "-f", "-", "--dry-run=server")
	refused("bob creating an AccountInfo", errOut, err)

	// A ServiceAccount of bob's, named as the account-operator's.
	_, _, _ = k.RunErr(t, "create", "namespace", "default")
	k.Run(t, "create", "serviceaccount", "account-operator", "-n", "default")
	k.Run(t, "create", "clusterrolebinding", "sa-admin", "--clusterrole=cluster-admin", "--serviceaccount=default:account-operator")
	token := strings.TrimSpace(k.Run(t, "create", "token", "account-operator", "-n", "default"))
	body, _ := json.Marshal(map[string]any{"spec": map[string]any{"fga": map[string]any{"store": map[string]any{"id": alice.storeID}}}})
	path := "/clusters/" + bob.path + "/apis/core.platform-mesh.io/v1alpha1/accountinfos/account?dryRun=All"
	resp := s.RequestWithType(t, token, http.MethodPatch, path, "application/merge-patch+json", body)
	if resp.Code != http.StatusForbidden || !strings.Contains(string(resp.Body), "AccountInfo is written by the platform only") {
		t.Errorf("bob's ServiceAccount default/account-operator patching the AccountInfo: %d %s, want 403 refused as the platform's", resp.Code, resp.Body)
	}
	// bob impersonating the operator's ServiceAccount, with the
	// operators' cluster in its extra (his RBAC in his workspace allows
	// impersonation): refused, the extra is the core's to set.
	pms, err := jsonpath(t, s.KubectlFor("root"), "{.spec.cluster}", "get", "workspace", "platform-mesh-system")
	if err != nil || pms == "" {
		t.Fatalf("cluster of root:platform-mesh-system: %q, %v", pms, err)
	}
	cfg := s.UserRESTConfig(t, "bob", bob.path)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:default:account-operator",
		Groups: []string{"system:serviceaccounts", "system:authenticated"},
		Extra:  map[string][]string{"authentication.kubernetes.io/cluster-name": {pms}}}
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(ctxFor(t), http.MethodPatch, cfg.Host+"/apis/core.platform-mesh.io/v1alpha1/accountinfos/account?dryRun=All",
		strings.NewReader(patch))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/merge-patch+json")
	res, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	answer, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode < 400 {
		t.Errorf("bob impersonating the account-operator's ServiceAccount of %s patched his AccountInfo: %d %s", pms, res.StatusCode, answer)
	}
	err = fmt.Errorf("%d %s", res.StatusCode, answer)
	t.Logf("impersonating the operator's ServiceAccount: %v", err)
	if info := accountInfoOf(t, s, bob.path); info.Spec.FGA.Store.ID != bob.storeID {
		t.Fatalf("bob's AccountInfo names store %s, want his own %s", info.Spec.FGA.Store.ID, bob.storeID)
	}
}

// TestLongOrganizationNameRefused: an organization whose derived workspace
// type names (<org>-account) would not fit in 63 characters is refused at
// admission with the limit, as is an account whose workspace name would
// not fit; a name at the limit becomes Ready.
func TestLongOrganizationNameRefused(t *testing.T) {
	s := platform(t)
	bob := s.KubectlAsUser(t, "bob", "root:orgs")
	pad := func(prefix string, n int) string {
		name := framework.UniqueName(prefix)
		return name + strings.Repeat("a", n-len(name))
	}
	refused := func(k *framework.Kubectl, name, typ, want string) {
		t.Helper()
		_, errOut, err := k.RunStdinErr(t, accountYAML(name, typ, "bob"), "create", "-f", "-", "--dry-run=server")
		if err == nil || !strings.Contains(errOut, want) {
			t.Errorf("creating %s Account of %d characters: err %v, stderr %q; want it refused with %q", typ, len(name), err, errOut, want)
		}
	}
	refused(bob, pad("long", 100), "org", "at most 55")
	refused(bob, pad("long", 56), "org", "at most 55")
	name := pad("long", 55)
	bob.RunStdin(t, accountYAML(name, "org", "bob"), "create", "-f", "-")
	t.Cleanup(func() { _, _, _ = s.KubectlFor("root:orgs").RunErr(t, "delete", "account", name, "--wait=false") })
	waitAccountReady(t, bob, name)
	// Accounts live inside an organization (an account in root:orgs is
	// refused for its placement first).
	inOrg := s.KubectlAsUser(t, "bob", "root:orgs:"+name)
	refused(inOrg, pad("long", 64), "account", "at most 63")
	refused(inOrg, "dotted.name", "account", "is not a workspace name")
}
