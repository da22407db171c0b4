// Package rbac authorizes requests with the RBAC objects (Roles,
// ClusterRoles, RoleBindings, ClusterRoleBindings) of the request's logical
// cluster, with kube-apiserver's RBAC semantics. Each evaluation reads the
// objects of exactly one logical cluster: bindings and roles of cluster A
// never grant anything in cluster B.
//
// The package does no caching of its own; RuleSource implementations are
// expected to be backed by informers or another cache.
package rbac

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/meshplane/meshplane/core/internal/clusters"
)

// RuleSource reads the RBAC objects of one logical cluster.
//
// Get methods return an apierrors NotFound error for missing objects. List
// methods may return NotFound for an unknown cluster; it is treated as an
// empty list. Returned objects are treated as read-only.
type RuleSource interface {
	ListClusterRoleBindings(ctx context.Context, cluster string) ([]*rbacv1.ClusterRoleBinding, error)
	ListRoleBindings(ctx context.Context, cluster, namespace string) ([]*rbacv1.RoleBinding, error)
	GetClusterRole(ctx context.Context, cluster, name string) (*rbacv1.ClusterRole, error)
	GetRole(ctx context.Context, cluster, namespace, name string) (*rbacv1.Role, error)
}

// Authorizer is an RBAC authorizer scoped to the logical cluster of each
// request. It implements authorizer.Authorizer and authorizer.RuleResolver.
type Authorizer struct {
	source      RuleSource
	clusterFrom func(ctx context.Context) (string, bool)
}

var (
	_ authorizer.Authorizer   = (*Authorizer)(nil)
	_ authorizer.RuleResolver = (*Authorizer)(nil)
)

// New returns an Authorizer reading RBAC objects from source. clusterFrom
// returns the logical cluster of a request from its context; nil means
// clusters.From.
func New(source RuleSource, clusterFrom func(ctx context.Context) (string, bool)) *Authorizer {
	if clusterFrom == nil {
		clusterFrom = clusters.From
	}
	return &Authorizer{source: source, clusterFrom: clusterFrom}
}

// Authorize returns DecisionAllow when a rule bound to the user in the
// request's logical cluster grants the request, and DecisionNoOpinion
// otherwise (never DecisionDeny, RBAC only adds permissions).
//
// ClusterRoleBindings grant everywhere in the cluster, including
// non-resource URLs; RoleBindings grant resource requests in their own
// namespace only. Requests without a logical cluster, or for the wildcard
// cluster, get NoOpinion. Roles referenced by bindings but missing are
// skipped. Other errors reading the source do not prevent an Allow from
// another binding; if nothing allows, they are returned with NoOpinion.
func (a *Authorizer) Authorize(ctx context.Context, attrs authorizer.Attributes) (authorizer.Decision, string, error) {
	cluster, ok := a.clusterFrom(ctx)
	if !ok || cluster == "" {
		return authorizer.DecisionNoOpinion, "RBAC: no logical cluster in request", nil
	}
	if cluster == clusters.Wildcard {
		return authorizer.DecisionNoOpinion, "RBAC: no RBAC grants across all logical clusters", nil
	}
	u := attrs.GetUser()
	if u == nil {
		return authorizer.DecisionNoOpinion, fmt.Sprintf("RBAC: no user in request in logical cluster %q", cluster), nil
	}

	namespace := attrs.GetNamespace()
	if !attrs.IsResourceRequest() {
		// Non-resource URLs are granted by ClusterRoleBindings only.
		namespace = ""
	}

	var allowedBy string
	errs := a.visit(ctx, cluster, u, namespace, func(g grant) bool {
		if RulesAllow(attrs, g.rules...) {
			allowedBy = g.allowedReason(cluster)
			return false
		}
		return true
	})
	if allowedBy != "" {
		return authorizer.DecisionAllow, allowedBy, nil
	}

	reason := "RBAC: " + describeRequest(attrs, u, cluster)
	if len(errs) > 0 {
		// As kube-apiserver: errors reading RBAC objects explain the refusal
		// (a 403), they do not turn it into a server error.
		return authorizer.DecisionNoOpinion, reason + ": " + utilerrors.NewAggregate(errs).Error(), nil
	}
	return authorizer.DecisionNoOpinion, reason, nil
}

// RulesFor returns the rules that apply to u in namespace of the logical
// cluster in ctx, for SelfSubjectRulesReview: resource rules from
// ClusterRoleBindings and from RoleBindings in namespace (none from
// RoleBindings when namespace is empty), non-resource rules from
// ClusterRoleBindings only. The boolean is true when the list may be
// incomplete because of an error, which is then returned too.
func (a *Authorizer) RulesFor(ctx context.Context, u user.Info, namespace string) ([]authorizer.ResourceRuleInfo, []authorizer.NonResourceRuleInfo, bool, error) {
	cluster, ok := a.clusterFrom(ctx)
	if !ok || cluster == "" {
		return nil, nil, true, errors.New("RBAC: no logical cluster in request")
	}
	if cluster == clusters.Wildcard {
		return nil, nil, true, errors.New("RBAC: cannot list rules across all logical clusters")
	}
	if u == nil {
		return nil, nil, true, errors.New("RBAC: no user")
	}

	var (
		resourceRules    []authorizer.ResourceRuleInfo
		nonResourceRules []authorizer.NonResourceRuleInfo
	)
	errs := a.visit(ctx, cluster, u, namespace, func(g grant) bool {
		for _, r := range g.rules {
			if len(r.Resources) > 0 {
				resourceRules = append(resourceRules, &authorizer.DefaultResourceRuleInfo{
					Verbs:         slices.Clone(r.Verbs),
					APIGroups:     slices.Clone(r.APIGroups),
					Resources:     slices.Clone(r.Resources),
					ResourceNames: slices.Clone(r.ResourceNames),
				})
			}
			if len(r.NonResourceURLs) > 0 && g.bindingNamespace == "" {
				nonResourceRules = append(nonResourceRules, &authorizer.DefaultNonResourceRuleInfo{
					Verbs:           slices.Clone(r.Verbs),
					NonResourceURLs: slices.Clone(r.NonResourceURLs),
				})
			}
		}
		return true
	})
	if len(errs) > 0 {
		return resourceRules, nonResourceRules, true, utilerrors.NewAggregate(errs)
	}
	return resourceRules, nonResourceRules, false, nil
}

// grant is the rules of one role reached through one binding that applies
// to the user.
type grant struct {
	bindingKind      string // "ClusterRoleBinding" or "RoleBinding"
	bindingNamespace string // "" for ClusterRoleBindings
	bindingName      string
	roleKind         string // "ClusterRole" or "Role"
	roleName         string
	subject          rbacv1.Subject
	rules            []rbacv1.PolicyRule
}

// allowedReason is the reason of an Allow through g in cluster, kube's
// RBAC wording: RBAC: allowed by RoleBinding "ns/name" of ClusterRole
// "name" to User "name" in logical cluster "cluster". Written into one
// buffer: every allowed request builds it (fmt cost some ten allocations).
func (g grant) allowedReason(cluster string) string {
	b := make([]byte, 0, 160)
	b = append(b, "RBAC: allowed by "...)
	b = append(b, g.bindingKind...)
	b = append(b, ' ')
	if g.bindingNamespace != "" {
		b = strconv.AppendQuote(b, g.bindingNamespace+"/"+g.bindingName)
	} else {
		b = strconv.AppendQuote(b, g.bindingName)
	}
	b = append(b, " of "...)
	b = append(b, g.roleKind...)
	b = append(b, ' ')
	b = strconv.AppendQuote(b, g.roleName)
	b = append(b, " to "...)
	b = append(b, g.subject.Kind...)
	b = append(b, ' ')
	b = strconv.AppendQuote(b, subjectName(g.subject))
	b = append(b, " in logical cluster "...)
	b = strconv.AppendQuote(b, cluster)
	return string(b)
}

func subjectName(s rbacv1.Subject) string {
	if s.Kind == rbacv1.ServiceAccountKind && s.Namespace != "" {
		return s.Namespace + "/" + s.Name
	}
	return s.Name
}

// roleKey identifies a role within one logical cluster.
type roleKey struct {
	kind, namespace, name string
}

// visit calls fn with the rules of every role bound to u in cluster:
// first through ClusterRoleBindings, then through RoleBindings in namespace
// (skipped when namespace is empty). It stops when fn returns false. Each
// role is visited at most once: its rules reached through a RoleBinding can
// grant nothing more than the same rules reached through a
// ClusterRoleBinding, and callers only read resource rules from
// RoleBindings. Work is linear in the number of bindings, subjects and
// bound rules, times the user's names and groups for subjects (as in
// kube's RBAC).
func (a *Authorizer) visit(ctx context.Context, cluster string, u user.Info, namespace string, fn func(grant) bool) []error {
	var errs []error
	seen := map[roleKey]struct{}{}
	m := newSubjectMatcher(EffectiveUsers(cluster, u)...)

	crbs, err := a.source.ListClusterRoleBindings(ctx, cluster)
	if err != nil && !apierrors.IsNotFound(err) {
		errs = append(errs, fmt.Errorf("listing ClusterRoleBindings in logical cluster %q: %w", cluster, err))
	}
	for _, crb := range crbs {
		if crb == nil || !inCluster(crb.Annotations, cluster) {
			continue
		}
		i := m.match(crb.Subjects, "")
		if i < 0 || crb.RoleRef.Kind != "ClusterRole" {
			continue
		}
		key := roleKey{kind: "ClusterRole", name: crb.RoleRef.Name}
		if _, ok := seen[key]; ok {
			continue
		}
		seen[key] = struct{}{}
		rules, err := a.roleRules(ctx, cluster, key)
		if err != nil {
			errs = append(errs, fmt.Errorf("ClusterRoleBinding %q: %w", crb.Name, err))
			continue
		}
		if rules == nil {
			continue
		}
		g := grant{
			bindingKind: "ClusterRoleBinding", bindingName: crb.Name,
			roleKind: key.kind, roleName: key.name,
			subject: crb.Subjects[i], rules: rules,
		}
		if !fn(g) {
			return nil
		}
	}

	if namespace == "" {
		return errs
	}
	rbs, err := a.source.ListRoleBindings(ctx, cluster, namespace)
	if err != nil && !apierrors.IsNotFound(err) {
		errs = append(errs, fmt.Errorf("listing RoleBindings in namespace %q of logical cluster %q: %w", namespace, cluster, err))
	}
	for _, rb := range rbs {
		if rb == nil || !inCluster(rb.Annotations, cluster) {
			continue
		}
		if rb.Namespace != "" && rb.Namespace != namespace {
			continue
		}
		i := m.match(rb.Subjects, namespace)
		if i < 0 {
			continue
		}
		var key roleKey
		switch rb.RoleRef.Kind {
		case "ClusterRole":
			key = roleKey{kind: "ClusterRole", name: rb.RoleRef.Name}
		case "Role":
			key = roleKey{kind: "Role", namespace: namespace, name: rb.RoleRef.Name}
		default:
			continue
		}
		if _, ok := seen[key]; ok {
			continue
		}
		seen[key] = struct{}{}
		rules, err := a.roleRules(ctx, cluster, key)
		if err != nil {
			errs = append(errs, fmt.Errorf("RoleBinding %q: %w", namespace+"/"+rb.Name, err))
			continue
		}
		if rules == nil {
			continue
		}
		subject := rb.Subjects[i]
		if subject.Kind == rbacv1.ServiceAccountKind && subject.Namespace == "" {
			subject.Namespace = namespace
		}
		g := grant{
			bindingKind: "RoleBinding", bindingNamespace: namespace, bindingName: rb.Name,
			roleKind: key.kind, roleName: key.name,
			subject: subject, rules: rules,
		}
		if !fn(g) {
			return nil
		}
	}
	return errs
}

// roleRules returns the rules of the referenced role, or nil without error
// when it does not exist (in this cluster). An aggregated ClusterRole
// contributes its rules as stored; aggregating them is a controller's job.
func (a *Authorizer) roleRules(ctx context.Context, cluster string, key roleKey) ([]rbacv1.PolicyRule, error) {
	switch key.kind {
	case "ClusterRole":
		cr, err := a.source.GetClusterRole(ctx, cluster, key.name)
		if apierrors.IsNotFound(err) || (err == nil && (cr == nil || !inCluster(cr.Annotations, cluster))) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("getting ClusterRole %q: %w", key.name, err)
		}
		return cr.Rules, nil
	case "Role":
		r, err := a.source.GetRole(ctx, cluster, key.namespace, key.name)
		if apierrors.IsNotFound(err) || (err == nil && (r == nil || !inCluster(r.Annotations, cluster))) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("getting Role %q: %w", key.namespace+"/"+key.name, err)
		}
		if r.Namespace != "" && r.Namespace != key.namespace {
			return nil, nil
		}
		return r.Rules, nil
	}
	return nil, nil
}

// inCluster is a defence against a RuleSource leaking objects across
// clusters: an object stamped with another cluster's name is ignored.
// Objects without the annotation are trusted to belong to the cluster asked
// for.
func inCluster(annotations map[string]string, cluster string) bool {
	c, ok := annotations[clusters.Annotation]
	return !ok || c == cluster
}

// serviceAccountPrefix starts the user name of every service account.
const serviceAccountPrefix = "system:serviceaccount:"

// subjectMatcher matches binding subjects against the users RBAC sees in
// one (see EffectiveUsers). It scans their names and groups as kube's RBAC
// does (a request's users have a few of each): building sets cost five
// allocations per authorization.
type subjectMatcher struct {
	users []user.Info
}

func newSubjectMatcher(users ...user.Info) subjectMatcher {
	return subjectMatcher{users: users}
}

func (m subjectMatcher) hasName(name string) bool {
	for _, u := range m.users {
		if n := u.GetName(); n != "" && n == name {
			return true
		}
	}
	return false
}

func (m subjectMatcher) hasGroup(group string) bool {
	for _, u := range m.users {
		if slices.Contains(u.GetGroups(), group) {
			return true
		}
	}
	return false
}

// hasServiceAccount reports whether a user is service account name of
// namespace ns (system:serviceaccount:<ns>:<name>), without building that
// name.
func (m subjectMatcher) hasServiceAccount(ns, name string) bool {
	for _, u := range m.users {
		rest, ok := strings.CutPrefix(u.GetName(), serviceAccountPrefix)
		if !ok {
			continue
		}
		if n, ok := strings.CutPrefix(rest, ns); ok && len(n) > 0 && n[0] == ':' && n[1:] == name {
			return true
		}
	}
	return false
}

// match returns the index of the first subject that denotes the user, or -1.
// defaultNamespace is the namespace of a RoleBinding, used for
// ServiceAccount subjects without a namespace ("" for ClusterRoleBindings,
// where such subjects match nobody).
func (m subjectMatcher) match(subjects []rbacv1.Subject, defaultNamespace string) int {
	for i, s := range subjects {
		switch s.Kind {
		case rbacv1.UserKind:
			if m.hasName(s.Name) {
				return i
			}
		case rbacv1.GroupKind:
			if m.hasGroup(s.Name) {
				return i
			}
		case rbacv1.ServiceAccountKind:
			ns := s.Namespace
			if ns == "" {
				ns = defaultNamespace
			}
			if ns != "" && s.Name != "" && m.hasServiceAccount(ns, s.Name) {
				return i
			}
		}
	}
	return -1
}

// describeRequest says who could not do what, for NoOpinion reasons.
func describeRequest(attrs authorizer.Attributes, u user.Info, cluster string) string {
	who := fmt.Sprintf("user %q", u.GetName())
	if groups := u.GetGroups(); len(groups) > 0 {
		who += fmt.Sprintf(" (groups %q)", groups)
	}
	if !attrs.IsResourceRequest() {
		return fmt.Sprintf("%s cannot %q path %q in logical cluster %q", who, attrs.GetVerb(), attrs.GetPath(), cluster)
	}
	resource := attrs.GetResource()
	if sub := attrs.GetSubresource(); sub != "" {
		resource += "/" + sub
	}
	what := fmt.Sprintf("%s cannot %q resource %q in API group %q", who, attrs.GetVerb(), resource, attrs.GetAPIGroup())
	if name := attrs.GetName(); name != "" {
		what += fmt.Sprintf(" named %q", name)
	}
	if ns := attrs.GetNamespace(); ns != "" {
		return fmt.Sprintf("%s in namespace %q in logical cluster %q", what, ns, cluster)
	}
	return fmt.Sprintf("%s at the cluster scope in logical cluster %q", what, cluster)
}
