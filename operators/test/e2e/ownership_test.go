package e2e

// The founder's ownership is the operator's, not a grant (issue 23): the
// org Account's owner tuples are computed from its spec.creator, never
// taken from Store.spec.tuples, so no edit of the grants removes them,
// and a restart writes back what was lost.

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"syscall"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	corev1alpha1 "github.com/meshplane/meshplane/apis/core/v1alpha1"
	"github.com/meshplane/meshplane/apis/fga"
	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestFounderOwnershipSurvivesGrantEdits: the platform admin edits alice's
// organization's grants in Store.spec.tuples with a merge patch, a JSON
// patch and kubectl apply, each leaving out alice's owner tuples (as the
// documented grant and revoke did). Once the operator has taken each edit
// (the grant in status.managedTuples) alice is still owner. Then her
// owner tuples are deleted in OpenFGA behind the operator's back and the
// operator is killed (SIGKILL) and started again: they are written back.
// Before the fix the first merge patch deleted them for good.
func TestFounderOwnershipSurvivesGrantEdits(t *testing.T) {
	s := platform(t)
	framework.SkipIfExternal(t, "restarts the security-operator")
	f := fgaFor(t)
	o := foundOrg(t, s, "alice", "own")
	orgs := adminClient(t, s, "root:orgs")
	owner := corev1alpha1.Tuple{Object: fga.AccountObject(o.orgsCluster, o.name), Relation: "owner", User: fga.UserID("alice")}
	checkEventually(t, f, o.storeID, owner, true)

	// taken waits until the operator has written want (and nothing of the
	// earlier grants): the edit is done, its deletions too.
	taken := func(what string, want corev1alpha1.Tuple, gone ...corev1alpha1.Tuple) {
		t.Helper()
		framework.Eventually(t, readyTimeout, 250*time.Millisecond, "the operator to take the "+what, func() (bool, string) {
			st := &corev1alpha1.Store{}
			if err := orgs.Get(ctxFor(t), client.ObjectKey{Name: o.name}, st); err != nil {
				return false, err.Error()
			}
			for _, g := range gone {
				if slices.Contains(st.Status.ManagedTuples, g) {
					return false, framework.Compact(st.Status.ManagedTuples)
				}
			}
			return slices.Contains(st.Status.ManagedTuples, want), framework.Compact(st.Status.ManagedTuples)
		})
		allowed, err := f.Check(ctxFor(t), o.storeID, owner)
		if err != nil {
			t.Fatal(err)
		}
		if !allowed {
			t.Fatalf("after the %s alice is no longer owner of her organization %s", what, o.name)
		}
	}
	member := func(user string) corev1alpha1.Tuple {
		return corev1alpha1.Tuple{Object: fga.AccountObject(o.orgsCluster, o.name), Relation: "member", User: fga.UserID(user)}
	}
	tupleJSON := func(ts ...corev1alpha1.Tuple) string {
		b, _ := json.Marshal(ts)
		return string(b)
	}
	admin := s.KubectlFor("root:orgs")

	bob, carol, dave := member("bob"), member("carol"), member("dave")
	admin.Run(t, "patch", "stores", o.name, "--type=merge", "-p", `{"spec":{"tuples":`+tupleJSON(bob)+`}}`)
	taken("merge patch replacing spec.tuples", bob)

	admin.Run(t, "patch", "stores", o.name, "--type=json", "-p", `[{"op":"replace","path":"/spec/tuples","value":`+tupleJSON(carol)+`}]`)
	taken("JSON patch replacing spec.tuples", carol, bob)

	st := &corev1alpha1.Store{}
	if err := orgs.Get(ctxFor(t), client.ObjectKey{Name: o.name}, st); err != nil {
		t.Fatal(err)
	}
	manifest := fmt.Sprintf("apiVersion: core.platform-mesh.io/v1alpha1\nkind: Store\nmetadata:\n  name: %s\nspec:\n  coreModule: %s\n  tuples: %s\n",
		o.name, mustJSON(st.Spec.CoreModule), tupleJSON(dave))
	admin.RunStdin(t, manifest, "apply", "--server-side", "--force-conflicts", "-f", "-")
	taken("server-side apply of spec.tuples", dave, carol)

	admin.Run(t, "patch", "stores", o.name, "--type=merge", "-p", `{"spec":{"tuples":null}}`)
	framework.Eventually(t, readyTimeout, 250*time.Millisecond, "the grants to be revoked", func() (bool, string) {
		got, err := f.Check(ctxFor(t), o.storeID, dave)
		return err == nil && !got, fmt.Sprint(got, err)
	})
	checkEventually(t, f, o.storeID, owner, true)

	// Drift: the owner tuples of the organization and of an account in
	// it gone from OpenFGA (as the earlier operator left the org's); a
	// restart of the operator writes them back.
	inOrg := s.KubectlAsUser(t, "alice", o.path)
	inOrg.RunStdin(t, accountYAML("team", "account", "alice"), "create", "-f", "-")
	waitAccountReady(t, inOrg, "team")
	team := fga.AccountObject(o.cluster, "team")
	teamOwner := corev1alpha1.Tuple{Object: team, Relation: "owner", User: fga.UserID("alice")}
	teamParent := corev1alpha1.Tuple{Object: team, Relation: "parent", User: fga.AccountObject(o.orgsCluster, o.name)}
	checkEventually(t, f, o.storeID, teamParent, true)
	lost := append(fga.AccountTuples(o.orgsCluster, o.name, "alice", "", ""),
		fga.AccountTuples(o.cluster, "team", "alice", o.orgsCluster, o.name)...)
	if err := f.Write(ctxFor(t), o.storeID, nil, lost); err != nil {
		t.Fatal(err)
	}
	checkEventually(t, f, o.storeID, owner, false)
	checkEventually(t, f, o.storeID, teamOwner, false)
	pid := sec.proc.PID()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-sec.proc.Exited()
	t.Logf("killed the security-operator (pid %d) with SIGKILL", pid)
	if err := sec.start(context.Background()); err != nil {
		t.Fatal(err)
	}
	checkEventually(t, f, o.storeID, owner, true)
	checkEventually(t, f, o.storeID, teamParent, true)
	ts, err := f.Read(ctxFor(t), o.storeID, fga.OwnerRole(o.cluster, "team"))
	if err != nil || len(ts) == 0 {
		t.Fatalf("the owner role of account team after the restart: %v %v", ts, err)
	}
	checkEventually(t, f, o.storeID, corev1alpha1.Tuple{Object: team, Relation: "owner", User: fga.UserID("alice")}, true)
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}
