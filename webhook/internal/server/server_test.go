package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	authorizationv1 "k8s.io/api/authorization/v1"
	authorizationv1beta1 "k8s.io/api/authorization/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/meshplane/meshplane/apis/core/v1alpha1"
	"github.com/meshplane/meshplane/apis/fga"
	"github.com/meshplane/meshplane/operators/fgaclient"
	"github.com/meshplane/meshplane/sdk/testing/framework"
	"github.com/meshplane/meshplane/sdk/testing/openfga"
	"github.com/meshplane/meshplane/webhook/internal/clusters"
	"github.com/meshplane/meshplane/webhook/internal/decision"
	"github.com/meshplane/meshplane/webhook/internal/fgacheck"
	"github.com/meshplane/meshplane/webhook/internal/metrics"
	"github.com/meshplane/meshplane/webhook/internal/resources"
)

// fixture is a real OpenFGA with an organization's store, and the webhook's
// handler in front of it.
type fixture struct {
	fga     *openfga.Server
	admin   *fgaclient.Client
	store   string
	reg     *clusters.Registry
	metrics *metrics.Metrics
	decider *decision.Decider
	srv     *httptest.Server
}

const (
	cluster = "c1team"
	origin  = "c0org"
)

var account = fga.AccountObject(origin, "team")

func newFixture(t *testing.T, cacheTTL time.Duration) *fixture {
	t.Helper()
	f := &fixture{fga: openfga.Start(t, openfga.Options{})}
	var err error
	if f.admin, err = fgaclient.New(f.fga.URL); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if f.store, err = f.admin.CreateStore(ctx, "acme"); err != nil {
		t.Fatal(err)
	}
	f.writeModel(t, fga.Module{Name: fga.CoreModuleName, Contents: fga.CoreModule})
	f.write(t, fga.AccountTuples(origin, "team", "alice", "", ""), nil)

	f.reg = clusters.NewRegistry()
	f.reg.Set(clusters.Info{Cluster: cluster, Path: "root:orgs:acme:team", Org: "acme", Account: "team", OriginCluster: origin, StoreID: f.store})
	f.reg.MarkSynced()
	client, err := fgacheck.New(f.fga.URL, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	f.metrics = metrics.New(func() float64 { return float64(f.reg.Len()) })
	d := &decision.Decider{Clusters: f.reg, FGA: client, Metrics: f.metrics, Resources: &resources.Resolver{},
		CacheTTL: cacheTTL, NewClusterGrace: time.Minute, RetryAfter: time.Second}
	d.Init(100 * time.Millisecond)
	f.decider = d
	mux := http.NewServeMux()
	mux.Handle("/authz", AuthzHandler(d, f.metrics, logr.Discard()))
	mux.Handle("/rules", RulesHandler(d, client, logr.Discard()))
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fixture) writeModel(t *testing.T, modules ...fga.Module) {
	t.Helper()
	model, err := fga.Compose(modules)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.admin.WriteModelIfChanged(context.Background(), f.store, "", model); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) write(t *testing.T, add, remove []v1alpha1.Tuple) {
	t.Helper()
	if err := f.admin.Write(context.Background(), f.store, add, remove); err != nil {
		t.Fatal(err)
	}
}

func member(user string) v1alpha1.Tuple {
	return v1alpha1.Tuple{Object: account, Relation: fga.RelationMember, User: fga.UserID(user)}
}

// reviewOf is a v1 review of user doing verb on resource (namespace ns,
// name) in the test's cluster.
func reviewOf(user, verb, resource, ns, name string) authorizationv1.SubjectAccessReview {
	return authorizationv1.SubjectAccessReview{
		TypeMeta: typeMeta("authorization.k8s.io/v1"),
		Spec: authorizationv1.SubjectAccessReviewSpec{User: user, Groups: []string{"system:authenticated"},
			Extra:              map[string]authorizationv1.ExtraValue{"authorization.kcp.io/cluster-name": {cluster}},
			ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: verb, Version: "v1", Resource: resource, Namespace: ns, Name: name}},
	}
}

// answer posts a review and decodes the v1 answer; code is the HTTP code.
func (f *fixture) answer(t *testing.T, sar any) (authorizationv1.SubjectAccessReviewStatus, int, http.Header) {
	t.Helper()
	body, _ := json.Marshal(sar)
	resp, err := http.Post(f.srv.URL+"/authz", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out authorizationv1.SubjectAccessReview
	if resp.StatusCode == http.StatusOK {
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			t.Fatal(err)
		}
	}
	return out.Status, resp.StatusCode, resp.Header
}

func (f *fixture) allowed(t *testing.T, sar authorizationv1.SubjectAccessReview) bool {
	t.Helper()
	st, code, _ := f.answer(t, sar)
	if code != http.StatusOK {
		t.Fatalf("review of %s %s %s: HTTP %d", sar.Spec.User, sar.Spec.ResourceAttributes.Verb, sar.Spec.ResourceAttributes.Resource, code)
	}
	if st.Denied {
		t.Fatalf("the webhook never denies, got %+v", st)
	}
	return st.Allowed
}

func TestMain(m *testing.M) {
	code := m.Run()
	framework.CleanupBinaries()
	os.Exit(code)
}

// TestModel checks the mapping against OpenFGA: owners write, members
// read, strangers get no opinion, and a grant and its removal take effect.
func TestModel(t *testing.T) {
	f := newFixture(t, 0)
	for _, c := range []struct {
		user, verb, resource, ns, name string
		want                           bool
	}{
		{"alice", "create", "configmaps", "default", "", true},
		{"alice", "delete", "configmaps", "default", "cfg", true},
		{"alice", "list", "configmaps", "default", "", true},
		{"alice", "create", "namespaces", "", "", true},
		{"alice", "get", "namespaces", "", "default", true},
		{"bob", "list", "configmaps", "default", "", false},
		{"bob", "get", "configmaps", "default", "cfg", false},
		{"alice", "list", "configmaps", "", "", false}, // across namespaces: not in the model
		{"alice", "deletecollection", "configmaps", "default", "", false},
		{"alice", "get", "pods", "default", "p", false}, // not served
	} {
		if got := f.allowed(t, reviewOf(c.user, c.verb, c.resource, c.ns, c.name)); got != c.want {
			t.Errorf("%s %s %s (ns %q, name %q): allowed %v, want %v", c.user, c.verb, c.resource, c.ns, c.name, got, c.want)
		}
	}

	f.write(t, []v1alpha1.Tuple{member("bob")}, nil)
	framework.Eventually(t, 20*time.Second, 200*time.Millisecond, "bob to be allowed to list configmaps once a member", func() (bool, string) {
		return f.allowed(t, reviewOf("bob", "list", "configmaps", "default", "")), "not allowed"
	})
	for _, c := range []struct {
		verb, name string
		want       bool
	}{{"get", "cfg", true}, {"watch", "", true}, {"create", "", false}, {"update", "cfg", false}, {"delete", "cfg", false}} {
		if got := f.allowed(t, reviewOf("bob", c.verb, "configmaps", "default", c.name)); got != c.want {
			t.Errorf("member bob %s configmaps: allowed %v, want %v", c.verb, got, c.want)
		}
	}
	f.write(t, nil, []v1alpha1.Tuple{member("bob")})
	framework.Eventually(t, 20*time.Second, 200*time.Millisecond, "bob to lose his access once no member", func() (bool, string) {
		return !f.allowed(t, reviewOf("bob", "list", "configmaps", "default", "")), "still allowed"
	})
}

// TestNonResource checks discovery for members and nothing else.
func TestNonResource(t *testing.T) {
	f := newFixture(t, 0)
	nr := func(user, path string) authorizationv1.SubjectAccessReview {
		sar := reviewOf(user, "get", "", "", "")
		sar.Spec.ResourceAttributes = nil
		sar.Spec.NonResourceAttributes = &authorizationv1.NonResourceAttributes{Path: path, Verb: "get"}
		return sar
	}
	for _, c := range []struct {
		user, path string
		want       bool
	}{{"alice", "/apis", true}, {"alice", "/api/v1", true}, {"alice", "/openapi/v3", true}, {"alice", "/version", true},
		{"alice", "/healthz", false}, {"alice", "/metrics", false}, {"bob", "/apis", false}} {
		st, code, _ := f.answer(t, nr(c.user, c.path))
		if code != 200 || st.Allowed != c.want || st.Denied {
			t.Errorf("%s GET %s: HTTP %d, %+v; want allowed %v", c.user, c.path, code, st, c.want)
		}
	}
}

// TestClusters checks the answers for clusters the webhook does not know.
func TestClusters(t *testing.T) {
	f := newFixture(t, 0)
	other := reviewOf("alice", "list", "configmaps", "default", "")
	other.Spec.Extra = map[string]authorizationv1.ExtraValue{"authorization.kubernetes.io/cluster-name": {"elsewhere"}}
	st, code, _ := f.answer(t, other)
	if code != 200 || st.Allowed || !strings.Contains(st.Reason, "no account workspace") {
		t.Errorf("a cluster that is no account workspace: HTTP %d, %+v; want no opinion", code, st)
	}
	none := reviewOf("alice", "list", "configmaps", "default", "")
	none.Spec.Extra = nil
	if st, code, _ := f.answer(t, none); code != 200 || st.Allowed {
		t.Errorf("a review without cluster: HTTP %d, %+v; want no opinion", code, st)
	}

	// A workspace whose store is not known yet: 503 with Retry-After.
	f.reg.Set(clusters.Info{Cluster: "fresh", Path: "root:orgs:acme:fresh", Org: "acme", Account: "fresh", OriginCluster: origin})
	fresh := reviewOf("alice", "list", "configmaps", "default", "")
	fresh.Spec.Extra = map[string]authorizationv1.ExtraValue{"authorization.kcp.io/cluster-name": {"fresh"}}
	if _, code, h := f.answer(t, fresh); code != http.StatusServiceUnavailable || h.Get("Retry-After") == "" {
		t.Errorf("a workspace without store: HTTP %d, Retry-After %q; want 503 with Retry-After", code, h.Get("Retry-After"))
	}

	// A recreated organization: the new store id replaces the old one.
	newStore, err := f.admin.CreateStore(context.Background(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	f.reg.Set(clusters.Info{Cluster: cluster, Path: "root:orgs:acme:team", Org: "acme", Account: "team", OriginCluster: origin, StoreID: newStore})
	if f.allowed(t, reviewOf("alice", "list", "configmaps", "default", "")) {
		t.Errorf("alice is allowed through the old store after the organization's store changed")
	}
}

// TestCache checks that decisions are cached, pinned to the store's
// model: a new model makes the next review ask OpenFGA again.
func TestCache(t *testing.T) {
	f := newFixture(t, time.Hour)
	f.write(t, []v1alpha1.Tuple{member("bob")}, nil)
	sar := reviewOf("bob", "list", "configmaps", "default", "")
	framework.Eventually(t, 20*time.Second, 200*time.Millisecond, "bob to be allowed", func() (bool, string) {
		return f.allowed(t, sar), "not allowed"
	})
	f.write(t, nil, []v1alpha1.Tuple{member("bob")})
	if !f.allowed(t, sar) {
		t.Fatalf("a cached allow was not reused within the TTL")
	}
	if hits := counter(t, f, "rebac_authz_decision_cache_total", "hit"); hits < 1 {
		t.Errorf("cache hits = %v, want at least 1", hits)
	}
	// A new model (another module) invalidates the cached answers.
	f.writeModel(t, fga.Module{Name: fga.CoreModuleName, Contents: fga.CoreModule},
		fga.Module{Name: "widgets", Contents: fga.ResourceModule(fga.Resource{Group: "example.com", Plural: "widgets", Singular: "widget", Namespaced: true})})
	framework.Eventually(t, 20*time.Second, 200*time.Millisecond, "the revoked grant to stop working under the new model", func() (bool, string) {
		return !f.allowed(t, sar), "still allowed"
	})
}

// TestGrantsChanged: a grant change (the webhook saw a RoleAssignment or
// Store written) drops the organization's cached answers at once, and the
// next Check goes past OpenFGA's caches; another organization's answers,
// in the same OpenFGA store (--organization-stores=shared), stay.
func TestGrantsChanged(t *testing.T) {
	f := newFixture(t, time.Hour)
	// Organization victim in the same store, its account with the same name.
	const victimCluster, victimOrigin = "c2team", "c0victim"
	f.reg.Set(clusters.Info{Cluster: victimCluster, Path: "root:orgs:victim:team", Org: "victim", Account: "team", OriginCluster: victimOrigin, StoreID: f.store})
	victimMember := v1alpha1.Tuple{Object: fga.AccountObject(victimOrigin, "team"), Relation: fga.RelationMember, User: fga.UserID("carol")}
	f.write(t, append(fga.AccountTuples(victimOrigin, "team", "dave", "", ""), member("bob"), victimMember), nil)
	sar := reviewOf("bob", "list", "configmaps", "default", "")
	victimSAR := reviewOf("carol", "list", "configmaps", "default", "")
	victimSAR.Spec.Extra = map[string]authorizationv1.ExtraValue{"authorization.kcp.io/cluster-name": {victimCluster}}
	framework.Eventually(t, 20*time.Second, 200*time.Millisecond, "bob and carol to be allowed", func() (bool, string) {
		return f.allowed(t, sar) && f.allowed(t, victimSAR), "not allowed"
	})
	if f.allowed(t, reviewOf("carol", "list", "configmaps", "default", "")) {
		t.Fatal("carol, a member of victim, is allowed in acme's account sharing its store")
	}
	f.write(t, nil, []v1alpha1.Tuple{member("bob"), victimMember})
	if !f.allowed(t, sar) || !f.allowed(t, victimSAR) {
		t.Fatalf("a cached allow was not reused within the TTL")
	}
	f.decider.GrantsChanged("another-org")
	if !f.allowed(t, sar) {
		t.Fatalf("a change in another organization dropped this organization's answers")
	}
	f.decider.GrantsChanged("acme")
	if f.allowed(t, sar) {
		t.Fatalf("bob is still allowed right after his organization's grants changed")
	}
	if !f.allowed(t, victimSAR) {
		t.Fatalf("a change in acme dropped victim's cached answers: the cache is keyed by store, not organization")
	}
}

// TestOpenFGADown checks that without OpenFGA nothing is allowed.
func TestOpenFGADown(t *testing.T) {
	f := newFixture(t, 0)
	sar := reviewOf("alice", "list", "configmaps", "default", "")
	if !f.allowed(t, sar) {
		t.Fatal("alice should be allowed while OpenFGA runs")
	}
	if err := f.fga.Stop(); err != nil {
		t.Fatal(err)
	}
	st, code, _ := f.answer(t, sar)
	if code != 200 || st.Allowed || st.Denied || st.EvaluationError == "" {
		t.Errorf("with OpenFGA stopped: HTTP %d, %+v; want no opinion with an evaluation error", code, st)
	}
}

// TestWire checks v1beta1, the size cap and bad input.
func TestWire(t *testing.T) {
	f := newFixture(t, 0)
	beta := authorizationv1beta1.SubjectAccessReview{TypeMeta: typeMeta("authorization.k8s.io/v1beta1"),
		Spec: authorizationv1beta1.SubjectAccessReviewSpec{User: "alice",
			Extra:              map[string]authorizationv1beta1.ExtraValue{"authorization.kcp.io/cluster-name": {cluster}},
			ResourceAttributes: &authorizationv1beta1.ResourceAttributes{Verb: "list", Version: "v1", Resource: "configmaps", Namespace: "default"}}}
	body, _ := json.Marshal(beta)
	resp, err := http.Post(f.srv.URL+"/authz", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var out authorizationv1beta1.SubjectAccessReview
	_ = json.NewDecoder(resp.Body).Decode(&out)
	resp.Body.Close()
	if resp.StatusCode != 200 || out.APIVersion != "authorization.k8s.io/v1beta1" || !out.Status.Allowed {
		t.Errorf("v1beta1 review: HTTP %d, %s %+v; want a v1beta1 answer, allowed", resp.StatusCode, out.APIVersion, out.Status)
	}
	for _, c := range []struct {
		what string
		body []byte
		code int
	}{
		{"not JSON", []byte("{"), 400},
		{"another kind", []byte(`{"apiVersion":"authorization.k8s.io/v1","kind":"TokenReview"}`), 400},
		{"another version", []byte(`{"apiVersion":"authorization.k8s.io/v2","kind":"SubjectAccessReview"}`), 400},
		{"over 1 MiB", []byte(fmt.Sprintf(`{"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview","spec":{"user":"%s"}}`, strings.Repeat("a", 1<<20))), 413},
	} {
		resp, err := http.Post(f.srv.URL+"/authz", "application/json", bytes.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.code {
			t.Errorf("%s: HTTP %d, want %d", c.what, resp.StatusCode, c.code)
		}
	}
}

func counter(t *testing.T, f *fixture, name, label string) float64 {
	t.Helper()
	families, err := f.metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, fam := range families {
		if fam.GetName() != name {
			continue
		}
		for _, m := range fam.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetValue() == label {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}

func typeMeta(apiVersion string) metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: apiVersion, Kind: "SubjectAccessReview"}
}

// TestRules checks the rules listed for a SelfSubjectRulesReview.
func TestRules(t *testing.T) {
	f := newFixture(t, 0)
	rules := func(user string) authorizationv1.SubjectRulesReviewStatus {
		t.Helper()
		sar := reviewOf(user, "", "", "default", "")
		body, _ := json.Marshal(sar)
		resp, err := http.Post(f.srv.URL+"/rules", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out authorizationv1.SelfSubjectRulesReview
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != 200 {
			t.Fatalf("/rules for %s: HTTP %d, %v", user, resp.StatusCode, err)
		}
		return out.Status
	}
	verbsOf := func(s authorizationv1.SubjectRulesReviewStatus, group, resource string) string {
		for _, r := range s.ResourceRules {
			if r.APIGroups[0] == group && r.Resources[0] == resource {
				return strings.Join(r.Verbs, ",")
			}
		}
		return ""
	}
	alice := rules("alice")
	if got := verbsOf(alice, "", "configmaps"); got != "get,list,watch,create,update,patch,delete" {
		t.Errorf("owner alice's verbs on configmaps: %q", got)
	}
	if len(alice.NonResourceRules) != 1 || alice.EvaluationError != "" {
		t.Errorf("owner alice: non-resource rules %v, error %q", alice.NonResourceRules, alice.EvaluationError)
	}
	if bob := rules("bob"); len(bob.ResourceRules) != 0 || len(bob.NonResourceRules) != 0 {
		t.Errorf("bob, no member, has rules: %+v", bob)
	}
	f.write(t, []v1alpha1.Tuple{member("bob")}, nil)
	framework.Eventually(t, 20*time.Second, 200*time.Millisecond, "bob's rules as a member", func() (bool, string) {
		got := verbsOf(rules("bob"), "", "configmaps")
		return got == "get,list,watch", got
	})
	// Accounts: list and watch on the parent are for members, create for
	// owners (what the core module grants on Account objects themselves
	// is the model's business).
	if got := verbsOf(rules("bob"), "core.platform-mesh.io", "accounts"); !strings.HasPrefix(got, "get,list,watch") || strings.Contains(got, "create") {
		t.Errorf("member bob's verbs on accounts: %q", got)
	}
}

// TestObjectIDs plays the attacks on object ids against the real handler
// and OpenFGA: a grant on secret dbcreds in namespace public opens it
// there and not the secret of the same name in prod; a grant on
// clusterrole system:auditor does not open system.auditor; membership of
// service account system:serviceaccount:ops:robot does not go to a user
// named system.serviceaccount.ops.robot.
func TestObjectIDs(t *testing.T) {
	f := newFixture(t, 0)
	clusterRole := fga.TypeName("rbac.authorization.k8s.io", "clusterrole")
	f.write(t, []v1alpha1.Tuple{
		{Object: fga.ObjectID(fga.TypeName("", "secret"), cluster, "public", "dbcreds"), Relation: fga.RelationMember, User: fga.UserID("bob")},
		{Object: fga.ObjectID(clusterRole, cluster, "", "system:auditor"), Relation: fga.RelationMember, User: fga.UserID("bob")},
		member("system:serviceaccount:ops:robot"),
	}, nil)
	role := func(name string) authorizationv1.SubjectAccessReview {
		sar := reviewOf("bob", "get", "clusterroles", "", name)
		sar.Spec.ResourceAttributes.Group = "rbac.authorization.k8s.io"
		return sar
	}
	framework.Eventually(t, 20*time.Second, 200*time.Millisecond, "bob to read public/dbcreds once granted", func() (bool, string) {
		return f.allowed(t, reviewOf("bob", "get", "secrets", "public", "dbcreds")), "not allowed"
	})
	for _, c := range []struct {
		what string
		sar  authorizationv1.SubjectAccessReview
		want bool
	}{
		{"bob get secret prod/dbcreds (granted: public/dbcreds)", reviewOf("bob", "get", "secrets", "prod", "dbcreds"), false},
		{"bob delete secret public/dbcreds (a member, not an owner)", reviewOf("bob", "delete", "secrets", "public", "dbcreds"), false},
		{"bob list secrets in public (a grant on one object)", reviewOf("bob", "list", "secrets", "public", ""), false},
		{"bob get clusterrole system:auditor (granted)", role("system:auditor"), true},
		{"bob get clusterrole system.auditor (granted: system:auditor)", role("system.auditor"), false},
		{"service account robot lists configmaps (a member)", reviewOf("system:serviceaccount:ops:robot", "list", "configmaps", "default", ""), true},
		{"user system.serviceaccount.ops.robot lists configmaps", reviewOf("system.serviceaccount.ops.robot", "list", "configmaps", "default", ""), false},
	} {
		if got := f.allowed(t, c.sar); got != c.want {
			t.Errorf("%s: allowed %v, want %v", c.what, got, c.want)
		}
	}
}

// TestGroups: a grant to a group reaches the users the review says are in
// it, and nobody else; an organization whose model predates groups still
// answers its users (asked again without their groups).
func TestGroups(t *testing.T) {
	f := newFixture(t, 0)
	f.write(t, []v1alpha1.Tuple{{Object: account, Relation: fga.RelationMember, User: fga.GroupMembers("oidc:ops")}}, nil)
	withGroups := func(user string, groups ...string) authorizationv1.SubjectAccessReview {
		r := reviewOf(user, "list", "configmaps", "default", "")
		r.Spec.Groups = append(groups, "system:authenticated")
		return r
	}
	for _, c := range []struct {
		review authorizationv1.SubjectAccessReview
		want   bool
	}{
		{withGroups("erin", "oidc:ops"), true},
		{withGroups("erin"), false},
		{withGroups("erin", "ops"), false},
		{withGroups("oidc:ops"), false},
		{withGroups("alice", "oidc:ops", "x"), true},
	} {
		if got := f.allowed(t, c.review); got != c.want {
			t.Errorf("%s in %v listing configmaps: allowed %v, want %v", c.review.Spec.User, c.review.Spec.Groups, got, c.want)
		}
	}
	// A member through a group, not an owner.
	create := withGroups("erin", "oidc:ops")
	create.Spec.ResourceAttributes.Verb = "create"
	if f.allowed(t, create) {
		t.Error("erin (a member through oidc:ops) may create configmaps")
	}

	old, err := os.ReadFile("../../../apis/fga/testdata/core-module-2.fga")
	if err != nil {
		t.Fatal(err)
	}
	f.writeModel(t, fga.Module{Name: fga.CoreModuleName, Contents: string(old)})
	// The old model in use: the group's grant no longer holds...
	framework.Eventually(t, 20*time.Second, 200*time.Millisecond, "the model without groups to be used", func() (bool, string) {
		return !f.allowed(t, withGroups("erin", "oidc:ops")), "erin still allowed through her group"
	})
	// ... and a user with groups is answered all the same.
	if !f.allowed(t, withGroups("alice", "oidc:ops")) {
		t.Error("alice (owner, with groups) is not allowed by a model without groups")
	}
}
