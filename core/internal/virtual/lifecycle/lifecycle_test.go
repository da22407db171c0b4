package lifecycle

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	"github.com/kcp-dev/sdk/apis/tenancy/initialization"
	"github.com/kcp-dev/sdk/apis/tenancy/termination"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/meshplane/meshplane/core/internal/clusters"
)

type seen struct {
	called    bool
	path      string
	query     url.Values
	target    Target
	hasTarget bool
}

func serve(target string) (*httptest.ResponseRecorder, *seen) {
	s := &seen{}
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.called, s.path, s.query = true, r.URL.Path, r.URL.Query()
		s.target, s.hasTarget = From(r.Context())
		if got, _ := url.ParseRequestURI(r.RequestURI); got == nil || got.Path != r.URL.Path {
			s.path = "RequestURI " + r.RequestURI + " does not match the path"
		}
	})
	rec := httptest.NewRecorder()
	WithVirtualWorkspaces(next).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
	return rec, s
}

func label(kind Kind, id string) string {
	return Target{Kind: kind, ID: id}.label()
}

func TestRewrite(t *testing.T) {
	initLabel := func() string {
		k, v := initialization.InitializerToLabel(corev1alpha1.LogicalClusterInitializer("root:org-type"))
		return k + "=" + v
	}()
	termLabel := func() string {
		k, v := termination.TerminatorToLabel(corev1alpha1.LogicalClusterTerminator("abc:cleanup"))
		return k + "=" + v
	}()
	for _, tc := range []struct {
		name, target string
		wantTarget   Target
		wantPath     string
		wantSelector string
	}{
		{"initializing wildcard list", "/services/initializingworkspaces/root:org-type/clusters/*/apis/core.kcp.io/v1alpha1/logicalclusters",
			Target{Initializing, "root:org-type"}, "/clusters/*/apis/core.kcp.io/v1alpha1/logicalclusters", initLabel},
		{"initializing wildcard watch with a selector", "/services/initializingworkspaces/root:org-type/clusters/*/apis/core.kcp.io/v1alpha1/logicalclusters?watch=1&labelSelector=team%3Da",
			Target{Initializing, "root:org-type"}, "/clusters/*/apis/core.kcp.io/v1alpha1/logicalclusters", "team=a," + initLabel},
		{"terminating wildcard list", "/services/terminatingworkspaces/abc:cleanup/clusters/*/apis/core.kcp.io/v1alpha1/logicalclusters",
			Target{Terminating, "abc:cleanup"}, "/clusters/*/apis/core.kcp.io/v1alpha1/logicalclusters", termLabel},
		{"one cluster", "/services/initializingworkspaces/root:org-type/clusters/xyz/api/v1/namespaces",
			Target{Initializing, "root:org-type"}, "/clusters/xyz/api/v1/namespaces", ""},
		{"wildcard discovery", "/services/terminatingworkspaces/system:admin:t/clusters/*/apis",
			Target{Terminating, "system:admin:t"}, "/clusters/*/apis", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec, s := serve(tc.target)
			if !s.called {
				t.Fatalf("GET %s: not passed on (code %d: %s)", tc.target, rec.Code, rec.Body)
			}
			if s.path != tc.wantPath || !s.hasTarget || s.target != tc.wantTarget {
				t.Errorf("GET %s: passed on as %q with target %+v (%v), want %q with %+v", tc.target, s.path, s.target, s.hasTarget, tc.wantPath, tc.wantTarget)
			}
			if got := s.query.Get("labelSelector"); got != tc.wantSelector {
				t.Errorf("GET %s: label selector %q, want %q", tc.target, got, tc.wantSelector)
			}
			if strings.Contains(tc.target, "watch=1") && s.query.Get("watch") != "1" {
				t.Errorf("GET %s: query %v lost watch=1", tc.target, s.query)
			}
		})
	}
	if initLabel == label(Terminating, "root:org-type") {
		t.Errorf("initializer and terminator labels of the same id are both %q", initLabel)
	}
}

func TestPassesOtherPathsOn(t *testing.T) {
	for _, target := range []string{"/clusters/root/api", "/services/apiexport/root/e/clusters/*/apis", "/services", "/servicesx/initializingworkspaces/a:b/clusters/x"} {
		_, s := serve(target)
		if !s.called || s.path != target || s.hasTarget {
			t.Errorf("GET %s: passed on as %q with target %v (called %v), want it unchanged and without target", target, s.path, s.hasTarget, s.called)
		}
	}
}

// TestUnresolvedPaths: a path under a lifecycle virtual workspace without
// /clusters/<c> goes on unchanged and marked, for the Authorizer to refuse
// to everybody but system:masters, as kcp's virtual workspace server.
func TestUnresolvedPaths(t *testing.T) {
	for _, target := range []string{"/services/initializingworkspaces", "/services/initializingworkspaces/root:t",
		"/services/terminatingworkspaces/root:t/apis", "/services/initializingworkspaces/root:t/api/v1"} {
		var marked bool
		next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			marked, _ = r.Context().Value(unresolvedKey{}).(bool)
			if r.URL.Path != target {
				t.Errorf("GET %s: passed on as %s", target, r.URL.Path)
			}
		})
		WithVirtualWorkspaces(next).ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, target, nil))
		if !marked {
			t.Errorf("GET %s: not marked unresolved", target)
		}
	}
	ctx := context.WithValue(context.Background(), unresolvedKey{}, true)
	a := Authorizer{RBAC: &rbacAllowing{}, Clusters: fakeClusters{}}
	for _, tc := range []struct {
		user *user.DefaultInfo
		want authorizer.Decision
	}{
		{&user.DefaultInfo{Name: "alice", Groups: []string{user.AllAuthenticated}}, authorizer.DecisionDeny},
		{&user.DefaultInfo{Name: "kcp-admin", Groups: []string{"system:kcp:admin"}}, authorizer.DecisionDeny},
		{&user.DefaultInfo{Name: "shard-admin", Groups: []string{user.SystemPrivilegedGroup}}, authorizer.DecisionNoOpinion},
	} {
		if got, reason, _ := a.Authorize(ctx, authorizer.AttributesRecord{User: tc.user, Verb: "get", Path: "/services/initializingworkspaces/root:t/api"}); got != tc.want {
			t.Errorf("%s: decision %v (%q), want %v", tc.user.Name, got, reason, tc.want)
		}
	}
}

func TestBadPaths(t *testing.T) {
	for _, tc := range []struct {
		target string
		code   int32
		reason metav1.StatusReason
	}{
		{"/services/initializingworkspaces/notype/clusters/*/apis", http.StatusBadRequest, metav1.StatusReasonBadRequest},
		{"/services/initializingworkspaces/:t/clusters/*/apis", http.StatusBadRequest, metav1.StatusReasonBadRequest},
		{"/services/initializingworkspaces/root:/clusters/*/apis", http.StatusBadRequest, metav1.StatusReasonBadRequest},
		{"/services/terminatingworkspaces/..:t/clusters/*/apis", http.StatusBadRequest, metav1.StatusReasonBadRequest},
		{"/services/terminatingworkspaces/root:Type/clusters/*/apis", http.StatusBadRequest, metav1.StatusReasonBadRequest},
	} {
		rec, s := serve(tc.target)
		var status metav1.Status
		if err := json.Unmarshal(rec.Body.Bytes(), &status); err != nil || s.called || rec.Code != int(tc.code) ||
			status.Kind != "Status" || status.Code != tc.code || status.Reason != tc.reason {
			t.Errorf("GET %s: code %d, passed on %v, body %s; want a %d Status with reason %s", tc.target, rec.Code, s.called, rec.Body, tc.code, tc.reason)
		}
	}
}

// rbacAllowing allows verb on workspacetypes/name in cluster, and records
// what it was asked.
type rbacAllowing struct {
	cluster, verb, name string
	asked               []string
}

func (a *rbacAllowing) Authorize(ctx context.Context, attrs authorizer.Attributes) (authorizer.Decision, string, error) {
	c, _ := clusters.From(ctx)
	a.asked = append(a.asked, c+" "+attrs.GetVerb()+" "+attrs.GetResource()+"/"+attrs.GetName())
	if c == a.cluster && attrs.GetVerb() == a.verb && attrs.GetResource() == "workspacetypes" && attrs.GetName() == a.name {
		return authorizer.DecisionAllow, "", nil
	}
	return authorizer.DecisionNoOpinion, "", nil
}

type fakeClusters map[string]*corev1alpha1.LogicalCluster

func (f fakeClusters) Get(cluster string) (*corev1alpha1.LogicalCluster, bool) {
	lc, ok := f[cluster]
	return lc, ok
}

func TestAuthorizer(t *testing.T) {
	now := metav1.Now()
	lcs := fakeClusters{
		"initializing": {Status: corev1alpha1.LogicalClusterStatus{Phase: corev1alpha1.LogicalClusterPhaseInitializing,
			Initializers: []corev1alpha1.LogicalClusterInitializer{"root:org"}}},
		"ready":       {Status: corev1alpha1.LogicalClusterStatus{Phase: corev1alpha1.LogicalClusterPhaseReady}},
		"terminating": {ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &now}, Status: corev1alpha1.LogicalClusterStatus{Terminators: []corev1alpha1.LogicalClusterTerminator{"root:org"}}},
	}
	alice := &user.DefaultInfo{Name: "alice"}
	for _, tc := range []struct {
		name      string
		target    *Target
		cluster   string
		attrs     authorizer.AttributesRecord
		allowedBy string // the verb RBAC allows on root|org
		want      authorizer.Decision
	}{
		{"not a virtual workspace", nil, "initializing", authorizer.AttributesRecord{Verb: "get"}, "initialize", authorizer.DecisionNoOpinion},
		{"wildcard list of logicalclusters", &Target{Initializing, "root:org"}, "*",
			authorizer.AttributesRecord{Verb: "list", APIGroup: "core.kcp.io", Resource: "logicalclusters", ResourceRequest: true}, "initialize", authorizer.DecisionAllow},
		{"wildcard list without the initialize permission", &Target{Initializing, "root:org"}, "*",
			authorizer.AttributesRecord{Verb: "list", APIGroup: "core.kcp.io", Resource: "logicalclusters", ResourceRequest: true}, "terminate", authorizer.DecisionDeny},
		{"wildcard list of configmaps", &Target{Initializing, "root:org"}, "*",
			authorizer.AttributesRecord{Verb: "list", Resource: "configmaps", ResourceRequest: true}, "initialize", authorizer.DecisionDeny},
		{"wildcard delete of logicalclusters", &Target{Initializing, "root:org"}, "*",
			authorizer.AttributesRecord{Verb: "delete", APIGroup: "core.kcp.io", Resource: "logicalclusters", ResourceRequest: true}, "initialize", authorizer.DecisionDeny},
		{"wildcard discovery", &Target{Initializing, "root:org"}, "*", authorizer.AttributesRecord{Verb: "get", Path: "/apis"}, "initialize", authorizer.DecisionAllow},
		{"initializing cluster", &Target{Initializing, "root:org"}, "initializing",
			authorizer.AttributesRecord{Verb: "create", Resource: "configmaps", ResourceRequest: true}, "initialize", authorizer.DecisionAllow},
		{"ready cluster", &Target{Initializing, "root:org"}, "ready",
			authorizer.AttributesRecord{Verb: "get", Resource: "configmaps", ResourceRequest: true}, "initialize", authorizer.DecisionDeny},
		{"unknown cluster", &Target{Initializing, "root:org"}, "gone",
			authorizer.AttributesRecord{Verb: "get", Resource: "configmaps", ResourceRequest: true}, "initialize", authorizer.DecisionDeny},
		{"terminating cluster", &Target{Terminating, "root:org"}, "terminating",
			authorizer.AttributesRecord{Verb: "delete", Resource: "configmaps", ResourceRequest: true}, "terminate", authorizer.DecisionAllow},
		{"initializing cluster through the terminating workspace", &Target{Terminating, "root:org"}, "initializing",
			authorizer.AttributesRecord{Verb: "get", Resource: "configmaps", ResourceRequest: true}, "terminate", authorizer.DecisionDeny},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rbac := &rbacAllowing{cluster: "root", verb: tc.allowedBy, name: "org"}
			a := Authorizer{RBAC: rbac, Clusters: lcs}
			ctx := clusters.WithCluster(context.Background(), tc.cluster)
			if tc.target != nil {
				ctx = context.WithValue(ctx, contextKey{}, *tc.target)
			}
			tc.attrs.User = alice
			got, reason, err := a.Authorize(ctx, tc.attrs)
			if err != nil || got != tc.want {
				t.Errorf("%s %s in %s: decision %v (%q, err %v), want %v; RBAC was asked %v", tc.attrs.Verb, tc.attrs.Resource, tc.cluster, got, reason, err, tc.want, rbac.asked)
			}
			if got == authorizer.DecisionDeny && reason == "" {
				t.Errorf("%s %s in %s: denied without a reason", tc.attrs.Verb, tc.attrs.Resource, tc.cluster)
			}
		})
	}
}

// TestAuthorizerPermissions: a type's terminatorPermissions bound what its
// terminator does inside a terminating cluster (its LogicalCluster and
// discovery stay reachable).
func TestAuthorizerPermissions(t *testing.T) {
	now := metav1.Now()
	lcs := fakeClusters{"terminating": {ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &now},
		Status: corev1alpha1.LogicalClusterStatus{Terminators: []corev1alpha1.LogicalClusterTerminator{"root:org"}}}}
	rules := []rbacv1.PolicyRule{{Verbs: []string{"get", "list"}, APIGroups: []string{""}, Resources: []string{"configmaps"}}}
	a := Authorizer{RBAC: &rbacAllowing{cluster: "root", verb: "terminate", name: "org"}, Clusters: lcs,
		Permissions: func(_ context.Context, typeCluster, typeName string, kind Kind) ([]rbacv1.PolicyRule, error) {
			if typeCluster != "root" || typeName != "org" || kind != Terminating {
				t.Errorf("permissions asked of %s:%s (%s)", typeCluster, typeName, kind)
			}
			return rules, nil
		}}
	ctx := context.WithValue(clusters.WithCluster(context.Background(), "terminating"), contextKey{}, Target{Terminating, "root:org"})
	alice := &user.DefaultInfo{Name: "alice"}
	for _, tc := range []struct {
		what  string
		attrs authorizer.AttributesRecord
		want  authorizer.Decision
	}{
		{"get a configmap", authorizer.AttributesRecord{Verb: "get", Resource: "configmaps", Namespace: "default", Name: "c", ResourceRequest: true}, authorizer.DecisionAllow},
		{"get a secret", authorizer.AttributesRecord{Verb: "get", Resource: "secrets", Namespace: "default", Name: "s", ResourceRequest: true}, authorizer.DecisionDeny},
		{"delete a configmap", authorizer.AttributesRecord{Verb: "delete", Resource: "configmaps", Namespace: "default", Name: "c", ResourceRequest: true}, authorizer.DecisionDeny},
		{"patch the LogicalCluster's status", authorizer.AttributesRecord{Verb: "patch", APIGroup: "core.kcp.io", Resource: "logicalclusters", Subresource: "status", Name: "cluster", ResourceRequest: true}, authorizer.DecisionAllow},
		{"discovery", authorizer.AttributesRecord{Verb: "get", Path: "/api"}, authorizer.DecisionAllow},
	} {
		tc.attrs.User = alice
		if got, reason, err := a.Authorize(ctx, tc.attrs); got != tc.want || err != nil {
			t.Errorf("%s: decision %v (%q, %v), want %v", tc.what, got, reason, err, tc.want)
		}
	}
	rules = nil // no permissions declared: the whole content, as before
	if got, _, _ := a.Authorize(ctx, authorizer.AttributesRecord{User: alice, Verb: "get", Resource: "secrets", Namespace: "default", Name: "s", ResourceRequest: true}); got != authorizer.DecisionAllow {
		t.Errorf("get a secret without terminatorPermissions: %v, want allowed", got)
	}
}
