package rbac

import (
	"context"
	"errors"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/meshplane/meshplane/core/internal/clusters"
)

// memSource is an in-memory RuleSource: every map is keyed by logical
// cluster.
type memSource struct {
	clusterRoles        map[string][]*rbacv1.ClusterRole
	roles               map[string][]*rbacv1.Role
	clusterRoleBindings map[string][]*rbacv1.ClusterRoleBinding
	roleBindings        map[string][]*rbacv1.RoleBinding

	// listErr, when set for a cluster, is returned by ListClusterRoleBindings.
	listErr map[string]error
	// getErr, when set for a cluster, is returned by GetClusterRole.
	getErr map[string]error

	getClusterRoleCalls int
}

func (s *memSource) ListClusterRoleBindings(_ context.Context, cluster string) ([]*rbacv1.ClusterRoleBinding, error) {
	if err := s.listErr[cluster]; err != nil {
		return nil, err
	}
	return s.clusterRoleBindings[cluster], nil
}

func (s *memSource) ListRoleBindings(_ context.Context, cluster, namespace string) ([]*rbacv1.RoleBinding, error) {
	var out []*rbacv1.RoleBinding
	for _, rb := range s.roleBindings[cluster] {
		if rb.Namespace == namespace {
			out = append(out, rb)
		}
	}
	return out, nil
}

func (s *memSource) GetClusterRole(_ context.Context, cluster, name string) (*rbacv1.ClusterRole, error) {
	s.getClusterRoleCalls++
	if err := s.getErr[cluster]; err != nil {
		return nil, err
	}
	for _, cr := range s.clusterRoles[cluster] {
		if cr.Name == name {
			return cr, nil
		}
	}
	return nil, apierrors.NewNotFound(rbacv1.Resource("clusterroles"), name)
}

func (s *memSource) GetRole(_ context.Context, cluster, namespace, name string) (*rbacv1.Role, error) {
	for _, r := range s.roles[cluster] {
		if r.Namespace == namespace && r.Name == name {
			return r, nil
		}
	}
	return nil, apierrors.NewNotFound(rbacv1.Resource("roles"), name)
}

func clusterRole(name string, rules ...rbacv1.PolicyRule) *rbacv1.ClusterRole {
	return &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}
}

func role(ns, name string, rules ...rbacv1.PolicyRule) *rbacv1.Role {
	return &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Rules: rules}
}

func crb(name, roleName string, subjects ...rbacv1.Subject) *rbacv1.ClusterRoleBinding {
	return &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: roleName},
		Subjects:   subjects,
	}
}

func rb(ns, name, roleKind, roleName string, subjects ...rbacv1.Subject) *rbacv1.RoleBinding {
	return &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: roleKind, Name: roleName},
		Subjects:   subjects,
	}
}

func userSubject(name string) rbacv1.Subject {
	return rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: name}
}

func groupSubject(name string) rbacv1.Subject {
	return rbacv1.Subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: name}
}

func saSubject(ns, name string) rbacv1.Subject {
	return rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: name}
}

func resourceRule(verbs, groups, resources []string, names ...string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{Verbs: verbs, APIGroups: groups, Resources: resources, ResourceNames: names}
}

func urlRule(verbs []string, urls ...string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{Verbs: verbs, NonResourceURLs: urls}
}

func l(s ...string) []string { return s }

// fixture returns RBAC objects for clusters "a" and "b".
func fixture() *memSource {
	return &memSource{
		clusterRoles: map[string][]*rbacv1.ClusterRole{
			"a": {
				clusterRole("pod-reader", resourceRule(l("get", "list", "watch"), l(""), l("pods"))),
				clusterRole("admin-all", resourceRule(l("*"), l("*"), l("*")), urlRule(l("*"), "*")),
				clusterRole("health", urlRule(l("get"), "/healthz", "/logs/*")),
				clusterRole("scaler",
					resourceRule(l("get", "update"), l("apps"), l("deployments/scale")),
					resourceRule(l("get"), l("*"), l("*/status"))),
				clusterRole("pod-subresources", resourceRule(l("get"), l(""), l("pods/*"))),
				clusterRole("named-config", resourceRule(l("get", "update", "list"), l(""), l("configmaps"), "app-config")),
				clusterRole("any-secret-name", resourceRule(l("get"), l(""), l("secrets"), "*")),
				{
					ObjectMeta:      metav1.ObjectMeta{Name: "aggregated"},
					AggregationRule: &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{"agg": "true"}}}},
					Rules:           []rbacv1.PolicyRule{resourceRule(l("get"), l(""), l("services"))},
				},
				{
					ObjectMeta:      metav1.ObjectMeta{Name: "aggregated-empty"},
					AggregationRule: &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{"agg": "x"}}}},
				},
				clusterRole("deployer", resourceRule(l("create", "patch"), l("apps"), l("deployments"))),
				clusterRole("wild-verbs", resourceRule(l("*"), l("batch"), l("jobs"))),
				clusterRole("wild-groups", resourceRule(l("list"), l("*"), l("widgets"))),
			},
			"b": {
				clusterRole("admin-all", resourceRule(l("*"), l("*"), l("*")), urlRule(l("*"), "*")),
			},
		},
		roles: map[string][]*rbacv1.Role{
			"a": {
				role("ns1", "cm-editor", resourceRule(l("*"), l(""), l("configmaps"))),
				role("ns2", "cm-editor", resourceRule(l("get"), l(""), l("secrets"))),
			},
		},
		clusterRoleBindings: map[string][]*rbacv1.ClusterRoleBinding{
			"a": {
				crb("alice-ghost", "ghost", userSubject("alice")),
				crb("alice-pods", "pod-reader", userSubject("alice")),
				crb("readers-health", "health", groupSubject("readers")),
				crb("scalers", "scaler", userSubject("scott")),
				crb("pod-sub", "pod-subresources", userSubject("pat")),
				crb("named", "named-config", userSubject("nina")),
				crb("any-name", "any-secret-name", userSubject("nina")),
				crb("agg", "aggregated", userSubject("agnes")),
				crb("agg-empty", "aggregated-empty", userSubject("agnes")),
				crb("wild-verbs", "wild-verbs", userSubject("will")),
				crb("wild-groups", "wild-groups", userSubject("will")),
				// A ServiceAccount subject without namespace in a
				// ClusterRoleBinding matches nobody.
				crb("sa-no-ns", "admin-all", saSubject("", "builder")),
				crb("sa-deployer", "deployer", saSubject("ci", "deployer")),
				// A binding stamped with another cluster is ignored.
				func() *rbacv1.ClusterRoleBinding {
					b := crb("leaked", "admin-all", userSubject("mallory"))
					b.Annotations = map[string]string{clusters.Annotation: "b"}
					return b
				}(),
			},
			"b": {
				crb("carol-admin", "admin-all", userSubject("carol")),
			},
		},
		roleBindings: map[string][]*rbacv1.RoleBinding{
			"a": {
				rb("ns1", "missing-role", "Role", "nope", userSubject("bob")),
				rb("ns1", "bob-admin", "ClusterRole", "admin-all", userSubject("bob")),
				rb("ns1", "bob-health", "ClusterRole", "health", userSubject("bob")),
				rb("ns1", "builder-cm", "Role", "cm-editor", saSubject("", "builder")),
				rb("ns1", "devs-cm", "Role", "cm-editor", groupSubject("devs")),
				rb("ns1", "other-ns-sa", "ClusterRole", "pod-reader", saSubject("ns2", "reader")),
			},
		},
	}
}

func res(u user.Info, verb, group, resource, sub, ns, name string) authorizer.AttributesRecord {
	return authorizer.AttributesRecord{
		User: u, Verb: verb, APIGroup: group, APIVersion: "v1", Resource: resource,
		Subresource: sub, Namespace: ns, Name: name, ResourceRequest: true,
	}
}

func nonRes(u user.Info, verb, path string) authorizer.AttributesRecord {
	return authorizer.AttributesRecord{User: u, Verb: verb, Path: path}
}

func usr(name string, groups ...string) user.Info {
	return &user.DefaultInfo{Name: name, Groups: groups}
}

func TestAuthorize(t *testing.T) {
	alice := usr("alice", "system:authenticated")
	bob := usr("bob")
	builder := usr("system:serviceaccount:ns1:builder")
	otherBuilder := usr("system:serviceaccount:ns2:builder")
	reader := usr("system:serviceaccount:ns2:reader")
	deployer := usr("system:serviceaccount:ci:deployer")

	tests := []struct {
		name    string
		cluster string
		attrs   authorizer.AttributesRecord
		allow   bool
	}{
		// User subjects.
		{"user get pods", "a", res(alice, "get", "", "pods", "", "ns1", "p"), true},
		{"user list pods all namespaces", "a", res(alice, "list", "", "pods", "", "", ""), true},
		{"user delete pods not granted", "a", res(alice, "delete", "", "pods", "", "ns1", "p"), false},
		{"user other resource", "a", res(alice, "get", "", "secrets", "", "ns1", "s"), false},
		{"user wrong group", "a", res(alice, "get", "apps", "pods", "", "ns1", "p"), false},
		{"user subresource not granted by plain resource", "a", res(alice, "get", "", "pods", "log", "ns1", "p"), false},
		{"unknown user", "a", res(usr("eve"), "get", "", "pods", "", "ns1", "p"), false},
		{"user name is not a group", "a", nonRes(usr("readers"), "get", "/healthz"), false},

		// Group subjects.
		{"group non-resource exact", "a", nonRes(usr("gus", "readers"), "get", "/healthz"), true},
		{"group non-resource prefix", "a", nonRes(usr("gus", "readers"), "get", "/logs/kube/x.log"), true},
		{"group non-resource prefix base", "a", nonRes(usr("gus", "readers"), "get", "/logs/"), true},
		{"group non-resource prefix needs slash", "a", nonRes(usr("gus", "readers"), "get", "/logs"), false},
		{"group non-resource no prefix on exact", "a", nonRes(usr("gus", "readers"), "get", "/healthz/ready"), false},
		{"group non-resource wrong verb", "a", nonRes(usr("gus", "readers"), "post", "/healthz"), false},
		{"group not member", "a", nonRes(usr("gus", "writers"), "get", "/healthz"), false},
		{"group in RoleBinding", "a", res(usr("dan", "devs"), "delete", "", "configmaps", "", "ns1", "c"), true},

		// ServiceAccount subjects.
		{"sa default namespace from RoleBinding", "a", res(builder, "update", "", "configmaps", "", "ns1", "c"), true},
		{"sa of other namespace same name", "a", res(otherBuilder, "update", "", "configmaps", "", "ns1", "c"), false},
		{"sa without namespace in ClusterRoleBinding matches nobody", "a", res(builder, "get", "", "nodes", "", "", "n"), false},
		{"sa from other namespace bound in ns1", "a", res(reader, "get", "", "pods", "", "ns1", "p"), true},
		{"sa bound in ns1 not granted in ns2", "a", res(reader, "get", "", "pods", "", "ns2", "p"), false},
		{"sa in ClusterRoleBinding", "a", res(deployer, "create", "apps", "deployments", "", "prod", ""), true},
		{"sa user name must be exact", "a", res(usr("system:serviceaccount:ci:deployer:x"), "create", "apps", "deployments", "", "prod", ""), false},

		// RoleBinding to ClusterRole is scoped to its namespace.
		{"rolebinding to clusterrole in namespace", "a", res(bob, "delete", "", "secrets", "", "ns1", "s"), true},
		{"rolebinding to clusterrole custom group", "a", res(bob, "create", "example.io", "widgets", "", "ns1", ""), true},
		{"rolebinding to clusterrole other namespace", "a", res(bob, "get", "", "secrets", "", "ns2", "s"), false},
		{"rolebinding to clusterrole cluster scope", "a", res(bob, "get", "", "nodes", "", "", "n"), false},
		{"rolebinding to clusterrole all namespaces", "a", res(bob, "list", "", "secrets", "", "", ""), false},
		{"rolebinding grants no non-resource urls", "a", nonRes(bob, "get", "/healthz"), false},
		{"rolebinding grants no non-resource urls (wildcard)", "a", nonRes(bob, "get", "/api"), false},
		{"role of other namespace with same name not used", "a", res(builder, "get", "", "secrets", "", "ns1", "s"), false},

		// Cross-cluster isolation.
		{"binding in a grants nothing in b", "b", res(alice, "get", "", "pods", "", "ns1", "p"), false},
		{"rolebinding in a grants nothing in b", "b", res(bob, "get", "", "secrets", "", "ns1", "s"), false},
		{"binding in b grants nothing in a", "a", res(usr("carol"), "get", "", "pods", "", "ns1", "p"), false},
		{"binding in b grants in b", "b", res(usr("carol"), "delete", "", "pods", "", "ns1", "p"), true},
		{"binding in b grants urls in b", "b", nonRes(usr("carol"), "get", "/metrics"), true},
		{"unknown cluster", "c", res(alice, "get", "", "pods", "", "ns1", "p"), false},
		{"object stamped with another cluster ignored", "a", res(usr("mallory"), "get", "", "pods", "", "ns1", "p"), false},

		// resourceNames.
		{"resource name matches", "a", res(usr("nina"), "get", "", "configmaps", "", "ns1", "app-config"), true},
		{"resource name differs", "a", res(usr("nina"), "get", "", "configmaps", "", "ns1", "other"), false},
		{"resource name: list without name", "a", res(usr("nina"), "list", "", "configmaps", "", "ns1", ""), false},
		{"resource name: list with name field selector", "a", res(usr("nina"), "list", "", "configmaps", "", "ns1", "app-config"), true},
		{"resource name: create without name", "a", res(usr("nina"), "create", "", "configmaps", "", "ns1", ""), false},
		{"resource name * is literal, as in kube", "a", res(usr("nina"), "get", "", "secrets", "", "ns1", "anything"), false},
		{"resource name * matches the name *", "a", res(usr("nina"), "get", "", "secrets", "", "ns1", "*"), true},
		{"resource name wildcard needs a name", "a", res(usr("nina"), "get", "", "secrets", "", "ns1", ""), false},

		// Subresources.
		{"exact subresource", "a", res(usr("scott"), "update", "apps", "deployments", "scale", "ns1", "d"), true},
		{"exact subresource not parent", "a", res(usr("scott"), "update", "apps", "deployments", "", "ns1", "d"), false},
		{"exact subresource wrong resource", "a", res(usr("scott"), "update", "apps", "replicasets", "scale", "ns1", "r"), false},
		{"*/status any resource", "a", res(usr("scott"), "get", "", "pods", "status", "ns1", "p"), true},
		{"*/status any group", "a", res(usr("scott"), "get", "example.io", "widgets", "status", "ns1", "w"), true},
		{"*/status not plain resource", "a", res(usr("scott"), "get", "", "pods", "", "ns1", "p"), false},
		{"*/status not other subresource", "a", res(usr("scott"), "get", "", "pods", "log", "ns1", "p"), false},
		{"pods/* is no wildcard, as in kube", "a", res(usr("pat"), "get", "", "pods", "log", "ns1", "p"), false},
		{"pods/* does not grant status", "a", res(usr("pat"), "get", "", "pods", "status", "ns1", "p"), false},
		{"pods/* not pods itself", "a", res(usr("pat"), "get", "", "pods", "", "ns1", "p"), false},
		{"pods/* not other resource", "a", res(usr("pat"), "get", "", "services", "proxy", "ns1", "s"), false},

		// Wildcards.
		{"wildcard everything", "b", res(usr("carol"), "escalate", "rbac.authorization.k8s.io", "clusterroles", "", "", "x"), true},
		{"wildcard resource covers subresource", "b", res(usr("carol"), "create", "", "pods", "eviction", "ns", "p"), true},
		{"wildcard verbs", "a", res(usr("will"), "deletecollection", "batch", "jobs", "", "ns1", ""), true},
		{"wildcard verbs wrong group", "a", res(usr("will"), "get", "apps", "jobs", "", "ns1", "j"), false},
		{"wildcard groups", "a", res(usr("will"), "list", "anything.example.com", "widgets", "", "", ""), true},
		{"wildcard groups wrong verb", "a", res(usr("will"), "get", "anything.example.com", "widgets", "", "", "w"), false},

		// Aggregated ClusterRoles use their stored rules.
		{"aggregated role stored rules", "a", res(usr("agnes"), "get", "", "services", "", "ns1", "s"), true},
		{"aggregated role nothing else", "a", res(usr("agnes"), "get", "", "pods", "", "ns1", "p"), false},

		// Missing roles are skipped.
		{"missing cluster role skipped, other binding allows", "a", res(alice, "watch", "", "pods", "", "", ""), true},
		{"missing role skipped", "a", res(bob, "get", "", "configmaps", "", "ns1", "c"), true},
	}
	src := fixture()
	a := New(src, nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := clusters.WithCluster(context.Background(), tt.cluster)
			d, reason, err := a.Authorize(ctx, tt.attrs)
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if got := d == authorizer.DecisionAllow; got != tt.allow {
				t.Fatalf("allow = %v, want %v (decision %v, reason %q)", got, tt.allow, d, reason)
			}
			if !tt.allow {
				if d != authorizer.DecisionNoOpinion {
					t.Fatalf("decision = %v, want NoOpinion", d)
				}
				for _, want := range []string{tt.attrs.User.GetName(), tt.attrs.Verb, `"` + tt.cluster + `"`} {
					if !strings.Contains(reason, want) {
						t.Errorf("reason %q does not mention %q", reason, want)
					}
				}
				what := tt.attrs.Path
				if tt.attrs.ResourceRequest {
					what = tt.attrs.Resource
				}
				if !strings.Contains(reason, what) {
					t.Errorf("reason %q does not mention %q", reason, what)
				}
			}
		})
	}
}

func TestAuthorizeClusterFromContext(t *testing.T) {
	src := fixture()
	attrs := res(usr("carol"), "get", "", "pods", "", "ns1", "p")
	tests := []struct {
		name        string
		clusterFrom func(context.Context) (string, bool)
		want        authorizer.Decision
	}{
		{"no cluster", func(context.Context) (string, bool) { return "", false }, authorizer.DecisionNoOpinion},
		{"empty cluster", func(context.Context) (string, bool) { return "", true }, authorizer.DecisionNoOpinion},
		{"wildcard cluster", func(context.Context) (string, bool) { return clusters.Wildcard, true }, authorizer.DecisionNoOpinion},
		{"custom resolver", func(context.Context) (string, bool) { return "b", true }, authorizer.DecisionAllow},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, _, err := New(src, tt.clusterFrom).Authorize(context.Background(), attrs)
			if err != nil || d != tt.want {
				t.Fatalf("got %v, %v; want %v", d, err, tt.want)
			}
		})
	}

	// Default resolver: clusters.From.
	if d, _, _ := New(src, nil).Authorize(context.Background(), attrs); d != authorizer.DecisionNoOpinion {
		t.Errorf("no cluster in context: got %v", d)
	}
	if d, _, _ := New(src, nil).Authorize(clusters.WithCluster(context.Background(), "*"), attrs); d != authorizer.DecisionNoOpinion {
		t.Errorf("wildcard cluster: got %v", d)
	}
	// No user.
	noUser := attrs
	noUser.User = nil
	if d, _, _ := New(src, nil).Authorize(clusters.WithCluster(context.Background(), "b"), noUser); d != authorizer.DecisionNoOpinion {
		t.Errorf("no user: got %v", d)
	}
}

func TestAuthorizeSourceErrors(t *testing.T) {
	src := fixture()
	boom := errors.New("boom")
	src.listErr = map[string]error{"a": boom}
	a := New(src, nil)
	ctx := clusters.WithCluster(context.Background(), "a")

	// The ClusterRoleBindings cannot be listed: nothing allows; the error
	// explains the refusal (a 403) rather than failing the request.
	d, reason, err := a.Authorize(ctx, res(usr("alice"), "get", "", "pods", "", "ns1", "p"))
	if d != authorizer.DecisionNoOpinion || err != nil || !strings.Contains(reason, "boom") {
		t.Fatalf("got %v, %q, %v; want NoOpinion with the error in the reason", d, reason, err)
	}
	// A RoleBinding still allows.
	d, _, err = a.Authorize(ctx, res(usr("bob"), "get", "", "secrets", "", "ns1", "s"))
	if d != authorizer.DecisionAllow || err != nil {
		t.Fatalf("got %v, %v; want Allow", d, err)
	}

	// Other errors than NotFound from GetClusterRole are reported in the reason.
	src = fixture()
	src.getErr = map[string]error{"a": boom}
	d, reason, err = New(src, nil).Authorize(ctx, res(usr("alice"), "get", "", "pods", "", "ns1", "p"))
	if d != authorizer.DecisionNoOpinion || err != nil || !strings.Contains(reason, "boom") {
		t.Fatalf("got %v, %q, %v", d, reason, err)
	}
}

func TestAuthorizeVisitsEachRoleOnce(t *testing.T) {
	src := &memSource{
		clusterRoles: map[string][]*rbacv1.ClusterRole{"a": {clusterRole("view", resourceRule(l("get"), l(""), l("pods")))}},
	}
	for i := 0; i < 50; i++ {
		src.clusterRoleBindings = map[string][]*rbacv1.ClusterRoleBinding{"a": append(src.clusterRoleBindings["a"],
			crb("b", "view", groupSubject("g")))}
	}
	d, _, _ := New(src, nil).Authorize(clusters.WithCluster(context.Background(), "a"), res(usr("u", "g"), "delete", "", "pods", "", "ns", "p"))
	if d != authorizer.DecisionNoOpinion {
		t.Fatalf("got %v", d)
	}
	if src.getClusterRoleCalls != 1 {
		t.Fatalf("GetClusterRole called %d times, want 1", src.getClusterRoleCalls)
	}
}

func TestRulesFor(t *testing.T) {
	a := New(fixture(), nil)
	type counts struct{ resource, nonResource int }
	tests := []struct {
		name      string
		cluster   string
		user      user.Info
		namespace string
		want      counts
	}{
		{"cluster rules only", "a", usr("alice"), "", counts{1, 0}},
		{"group urls", "a", usr("gus", "readers"), "", counts{0, 1}},
		{"rolebinding resource rules, no urls", "a", usr("bob"), "ns1", counts{1, 0}},
		{"rolebinding not in other namespace", "a", usr("bob"), "ns2", counts{0, 0}},
		{"cluster and namespace", "a", usr("bob", "readers"), "ns1", counts{1, 1}},
		{"other cluster", "b", usr("alice"), "ns1", counts{0, 0}},
		{"admin in b", "b", usr("carol"), "", counts{1, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, nr, incomplete, err := a.RulesFor(clusters.WithCluster(context.Background(), tt.cluster), tt.user, tt.namespace)
			if err != nil || incomplete {
				t.Fatalf("incomplete %v, err %v", incomplete, err)
			}
			if got := (counts{len(r), len(nr)}); got != tt.want {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}

	r, _, _, _ := a.RulesFor(clusters.WithCluster(context.Background(), "a"), usr("alice"), "")
	if got := r[0]; strings.Join(got.GetVerbs(), ",") != "get,list,watch" || strings.Join(got.GetResources(), ",") != "pods" {
		t.Errorf("unexpected rule %+v", got)
	}

	if _, _, incomplete, err := a.RulesFor(context.Background(), usr("alice"), ""); !incomplete || err == nil {
		t.Errorf("no cluster: incomplete %v, err %v", incomplete, err)
	}
	if _, _, incomplete, err := a.RulesFor(clusters.WithCluster(context.Background(), "*"), usr("alice"), ""); !incomplete || err == nil {
		t.Errorf("wildcard cluster: incomplete %v, err %v", incomplete, err)
	}
}

func TestRulesAllow(t *testing.T) {
	u := usr("u")
	tests := []struct {
		name  string
		rule  rbacv1.PolicyRule
		attrs authorizer.AttributesRecord
		want  bool
	}{
		{"exact", resourceRule(l("get"), l(""), l("pods")), res(u, "get", "", "pods", "", "n", "p"), true},
		{"no rule verbs", resourceRule(nil, l(""), l("pods")), res(u, "get", "", "pods", "", "n", "p"), false},
		{"no rule resources", resourceRule(l("get"), l(""), nil), res(u, "get", "", "pods", "", "n", "p"), false},
		{"no rule groups", resourceRule(l("get"), nil, l("pods")), res(u, "get", "", "pods", "", "n", "p"), false},
		{"* resource", resourceRule(l("get"), l(""), l("*")), res(u, "get", "", "pods", "exec", "n", "p"), true},
		{"*/* is no wildcard, as in kube", resourceRule(l("get"), l(""), l("*/*")), res(u, "get", "", "pods", "exec", "n", "p"), false},
		{"*/* not plain", resourceRule(l("get"), l(""), l("*/*")), res(u, "get", "", "pods", "", "n", "p"), false},
		{"pods/status exact", resourceRule(l("get"), l(""), l("pods/status")), res(u, "get", "", "pods", "status", "n", "p"), true},
		{"*/scale", resourceRule(l("get"), l("*"), l("*/scale")), res(u, "get", "apps", "statefulsets", "scale", "n", "s"), true},
		{"*/scale not prefix", resourceRule(l("get"), l("*"), l("*/scale")), res(u, "get", "apps", "statefulsets", "scalex", "n", "s"), false},
		{"resource rule not for url", resourceRule(l("get"), l("*"), l("*")), nonRes(u, "get", "/api"), false},
		{"url rule not for resource", urlRule(l("get"), "*"), res(u, "get", "", "pods", "", "n", "p"), false},
		{"url *", urlRule(l("get"), "*"), nonRes(u, "get", "/anything"), true},
		{"url prefix", urlRule(l("get"), "/apis*"), nonRes(u, "get", "/apis/apps"), true},
		{"url prefix exact base", urlRule(l("get"), "/apis*"), nonRes(u, "get", "/apis"), true},
		{"url exact only", urlRule(l("get"), "/version"), nonRes(u, "get", "/version/"), false},
		{"url verb *", urlRule(l("*"), "/version"), nonRes(u, "post", "/version"), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := RulesAllow(tt.attrs, tt.rule); got != tt.want {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
		})
	}
	if RulesAllow(res(u, "get", "", "pods", "", "n", "p")) {
		t.Error("no rules allowed a request")
	}
	if !RulesAllow(res(u, "get", "", "pods", "", "n", "p"), urlRule(l("get"), "*"), resourceRule(l("get"), l(""), l("pods"))) {
		t.Error("second rule ignored")
	}
}

func TestCovers(t *testing.T) {
	type rules = []rbacv1.PolicyRule
	tests := []struct {
		name          string
		owner         rules
		servant       rules
		want          bool
		wantUncovered rules
	}{
		{"empty servant", nil, nil, true, nil},
		{"identical", rules{resourceRule(l("get", "list"), l(""), l("pods"))}, rules{resourceRule(l("get", "list"), l(""), l("pods"))}, true, nil},
		{"superset verbs", rules{resourceRule(l("get", "list", "watch"), l(""), l("pods"))}, rules{resourceRule(l("get"), l(""), l("pods"))}, true, nil},
		{"missing verb", rules{resourceRule(l("get"), l(""), l("pods"))}, rules{resourceRule(l("get", "delete"), l(""), l("pods"))}, false,
			rules{resourceRule(l("delete"), l(""), l("pods"))}},
		{"split across owner rules", rules{
			resourceRule(l("get"), l(""), l("pods")),
			resourceRule(l("list"), l(""), l("pods")),
		}, rules{resourceRule(l("get", "list"), l(""), l("pods"))}, true, nil},
		{"owner wildcard all", rules{resourceRule(l("*"), l("*"), l("*"))}, rules{resourceRule(l("get"), l("apps"), l("deployments/scale"), "d")}, true, nil},
		{"servant wildcard verb needs owner wildcard", rules{resourceRule(l("get", "list"), l(""), l("pods"))}, rules{resourceRule(l("*"), l(""), l("pods"))}, false,
			rules{resourceRule(l("*"), l(""), l("pods"))}},
		{"servant wildcard group needs owner wildcard", rules{resourceRule(l("get"), l("", "apps"), l("pods"))}, rules{resourceRule(l("get"), l("*"), l("pods"))}, false,
			rules{resourceRule(l("get"), l("*"), l("pods"))}},
		{"servant wildcard resource needs owner wildcard", rules{resourceRule(l("get"), l(""), l("pods", "*/*"))}, rules{resourceRule(l("get"), l(""), l("*"))}, false,
			rules{resourceRule(l("get"), l(""), l("*"))}},
		{"plain resource does not cover subresource", rules{resourceRule(l("get"), l(""), l("pods"))}, rules{resourceRule(l("get"), l(""), l("pods/status"))}, false,
			rules{resourceRule(l("get"), l(""), l("pods/status"))}},
		{"*/status covers pods/status", rules{resourceRule(l("get"), l(""), l("*/status"))}, rules{resourceRule(l("get"), l(""), l("pods/status", "services/status", "*/status"))}, true, nil},
		{"*/status does not cover pods", rules{resourceRule(l("get"), l(""), l("*/status"))}, rules{resourceRule(l("get"), l(""), l("pods"))}, false,
			rules{resourceRule(l("get"), l(""), l("pods"))}},
		{"pods/* covers only itself", rules{resourceRule(l("get"), l(""), l("pods/*"))}, rules{resourceRule(l("get"), l(""), l("pods/log", "pods/*"))}, false,
			rules{resourceRule(l("get"), l(""), l("pods/log"))}},
		{"pods/* does not cover */log or pods", rules{resourceRule(l("get"), l(""), l("pods/*"))}, rules{resourceRule(l("get"), l(""), l("*/log", "pods"))}, false,
			rules{resourceRule(l("get"), l(""), l("*/log")), resourceRule(l("get"), l(""), l("pods"))}},
		{"*/* covers only itself", rules{resourceRule(l("get"), l(""), l("*/*"))}, rules{resourceRule(l("get"), l(""), l("pods/log", "*/scale", "*/*"))}, false,
			rules{resourceRule(l("get"), l(""), l("pods/log")), resourceRule(l("get"), l(""), l("*/scale"))}},
		{"names: unrestricted owner", rules{resourceRule(l("get"), l(""), l("secrets"))}, rules{resourceRule(l("get"), l(""), l("secrets"), "a", "b")}, true, nil},
		{"names: owner subset", rules{resourceRule(l("get"), l(""), l("secrets"), "a")}, rules{resourceRule(l("get"), l(""), l("secrets"), "a", "b")}, false,
			rules{resourceRule(l("get"), l(""), l("secrets"), "b")}},
		{"names: restricted owner, unrestricted servant", rules{resourceRule(l("get"), l(""), l("secrets"), "a")}, rules{resourceRule(l("get"), l(""), l("secrets"))}, false,
			rules{resourceRule(l("get"), l(""), l("secrets"))}},
		{"names: owner * is only the name *", rules{resourceRule(l("get"), l(""), l("secrets"), "*")}, rules{resourceRule(l("get"), l(""), l("secrets"), "x", "*")}, false,
			rules{resourceRule(l("get"), l(""), l("secrets"), "x")}},
		{"names: listed names", rules{resourceRule(l("get"), l(""), l("secrets"), "x", "*")}, rules{resourceRule(l("get"), l(""), l("secrets"), "*")}, true, nil},
		{"names: owner * does not cover unnamed", rules{resourceRule(l("list"), l(""), l("secrets"), "*")}, rules{resourceRule(l("list"), l(""), l("secrets"))}, false,
			rules{resourceRule(l("list"), l(""), l("secrets"))}},
		{"urls: exact", rules{urlRule(l("get"), "/healthz")}, rules{urlRule(l("get"), "/healthz")}, true, nil},
		{"urls: prefix covers", rules{urlRule(l("get"), "/logs/*")}, rules{urlRule(l("get"), "/logs/a", "/logs/b/*")}, true, nil},
		{"urls: * covers all", rules{urlRule(l("*"), "*")}, rules{urlRule(l("get", "post"), "*", "/x")}, true, nil},
		{"urls: narrower prefix does not cover", rules{urlRule(l("get"), "/logs/a*")}, rules{urlRule(l("get"), "/logs/*")}, false,
			rules{urlRule(l("get"), "/logs/*")}},
		{"urls: exact does not cover prefix", rules{urlRule(l("get"), "/healthz")}, rules{urlRule(l("get"), "/healthz*")}, false,
			rules{urlRule(l("get"), "/healthz*")}},
		{"urls: resource rule does not cover urls", rules{resourceRule(l("*"), l("*"), l("*"))}, rules{urlRule(l("get"), "/healthz")}, false,
			rules{urlRule(l("get"), "/healthz")}},
		{"resources: url rule does not cover resources", rules{urlRule(l("*"), "*")}, rules{resourceRule(l("get"), l(""), l("pods"))}, false,
			rules{resourceRule(l("get"), l(""), l("pods"))}},
		{"uncovered deduplicated", rules{}, rules{
			resourceRule(l("get"), l(""), l("pods")),
			resourceRule(l("get"), l(""), l("pods")),
		}, false, rules{resourceRule(l("get"), l(""), l("pods"))}},
		{"servant granting nothing", rules{}, rules{resourceRule(l("get"), nil, l("pods"))}, true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, uncovered := Covers(tt.owner, tt.servant)
			if got != tt.want {
				t.Fatalf("covers = %v, want %v (uncovered %v)", got, tt.want, uncovered)
			}
			if len(uncovered) != len(tt.wantUncovered) {
				t.Fatalf("uncovered = %v, want %v", uncovered, tt.wantUncovered)
			}
			for i := range uncovered {
				if uncovered[i].String() != tt.wantUncovered[i].String() {
					t.Errorf("uncovered[%d] = %v, want %v", i, uncovered[i].String(), tt.wantUncovered[i].String())
				}
			}
		})
	}
}

// TestCoversConsistentWithRulesAllow checks on a grid of requests that
// whenever Covers says the owner covers the servant, every request the
// servant allows is allowed by the owner.
func TestCoversConsistentWithRulesAllow(t *testing.T) {
	patterns := []rbacv1.PolicyRule{
		resourceRule(l("*"), l("*"), l("*")),
		resourceRule(l("get"), l(""), l("pods")),
		resourceRule(l("get"), l(""), l("pods/*")),
		resourceRule(l("get"), l(""), l("*/status")),
		resourceRule(l("get"), l(""), l("*/*")),
		resourceRule(l("get"), l(""), l("pods/status")),
		resourceRule(l("get", "list"), l("", "apps"), l("pods", "deployments")),
		resourceRule(l("get"), l(""), l("pods"), "a"),
		resourceRule(l("get"), l(""), l("pods"), "*"),
		urlRule(l("get"), "*"),
		urlRule(l("get"), "/api*"),
		urlRule(l("get"), "/api/*"),
		urlRule(l("get"), "/api"),
	}
	u := usr("u")
	var requests []authorizer.AttributesRecord
	for _, verb := range l("get", "list") {
		for _, group := range l("", "apps") {
			for _, resource := range l("pods", "deployments") {
				for _, sub := range l("", "status", "log") {
					for _, name := range l("", "a", "b") {
						requests = append(requests, res(u, verb, group, resource, sub, "n", name))
					}
				}
			}
		}
		for _, path := range l("/api", "/api/v1", "/apis", "/healthz") {
			requests = append(requests, nonRes(u, verb, path))
		}
	}
	for _, owner := range patterns {
		for _, servant := range patterns {
			covered, _ := Covers([]rbacv1.PolicyRule{owner}, []rbacv1.PolicyRule{servant})
			if !covered {
				continue
			}
			for _, req := range requests {
				if RulesAllow(req, servant) && !RulesAllow(req, owner) {
					t.Errorf("owner %v covers servant %v but does not allow %+v", owner.String(), servant.String(), req)
				}
			}
		}
	}
}
