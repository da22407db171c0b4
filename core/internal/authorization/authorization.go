// Package authorization assembles the server's authorizer chain:
// system:masters may do anything; only they may use the wildcard cluster;
// then the bootstrap policy and each logical cluster's own RBAC decide.
package authorization

import (
	"context"
	"fmt"
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	"k8s.io/apiserver/pkg/authorization/union"

	"github.com/meshplane/meshplane/core/internal/authorization/bootstrap"
	"github.com/meshplane/meshplane/core/internal/authorization/privileged"
	"github.com/meshplane/meshplane/core/internal/authorization/rbac"
	"github.com/meshplane/meshplane/core/internal/clusters"
	"github.com/meshplane/meshplane/core/internal/handlerchain"
	"github.com/meshplane/meshplane/core/internal/serviceaccount"
)

// Workspaces tells the phase and path of workspace clusters.
type Workspaces interface {
	// Workspace returns the phase and path of a workspace's cluster; ok is
	// false for clusters that are no workspace.
	Workspace(cluster string) (phase, path string, ok bool)
}

// Elsewhere is implemented by the Workspaces of a shard among several:
// it reports whether another shard holds a logical cluster this one does
// not (root included). Such a cluster is closed here, as in kcp, whose
// workspace content authorizer leaves a cluster a shard does not hold to
// nobody but system:masters: the front proxy sends each cluster's
// requests to its shard, and a shard asked directly must not answer for
// another's (discovery included).
type Elsewhere interface {
	Elsewhere(cluster string) bool
}

// Layer builds an authorizer consulted, in order, before the plain chain:
// the home workspace rule and the virtual workspaces' authorizers. full is
// the whole chain, layers included (for a virtual workspace that asks it
// again about the request it rewrote); plain is the chain without layers.
// Both are ready once New returns.
type Layer func(full, plain authorizer.Authorizer) authorizer.Authorizer

// Fixed is a layer that needs neither chain.
func Fixed(a authorizer.Authorizer) Layer {
	return func(_, _ authorizer.Authorizer) authorizer.Authorizer { return a }
}

// Webhook is an authorization webhook: asked after RBAC, and optionally
// listing rules for SelfSubjectRulesReviews.
type Webhook struct {
	Authorizer authorizer.Authorizer
	// Rules, when not nil, adds the webhook's rules to RBAC's.
	Rules authorizer.RuleResolver
}

// New returns the authorizer and the rule resolver for
// SelfSubjectRulesReviews. stored reads RBAC objects kept in each cluster.
// The layers are consulted first. The webhook, when set, is asked last,
// after RBAC (kcp's order), and also decides for a user who lacks access
// to a workspace: kcp's workspace content authorizer leaves such a user
// to the webhook rather than denying.
func New(stored rbac.RuleSource, workspaces Workspaces, hook Webhook, layers ...Layer) (authorizer.Authorizer, authorizer.RuleResolver) {
	webhook := hook.Authorizer
	// The bootstrap policy holds in every cluster and outside of any.
	boot := rbac.New(bootstrap.Source{}, func(ctx context.Context) (string, bool) {
		if cluster, ok := clusters.From(ctx); ok && cluster != clusters.Wildcard {
			return cluster, true
		}
		return "bootstrap", true
	})
	local := rbac.New(withBootstrapRoles{stored}, clusters.From)
	rbacUnion := distinctReasons{union.New(boot, local)}
	// plain decides requests that do not come through a virtual workspace.
	chain := []authorizer.Authorizer{
		authorizerfactory.NewPrivilegedGroups(user.SystemPrivilegedGroup),
		authorizer.AuthorizerFunc(denyWildcard),
		workspaceAccess{workspaces: workspaces, rbac: rbacUnion, webhook: webhook},
		rbacUnion,
	}
	if webhook != nil {
		chain = append(chain, quietNoOpinion{webhook})
	}
	plain := union.New(chain...)
	// Virtual workspaces decide first, for everybody, system:masters
	// included: what they show is limited by what they are.
	var full authorizer.Authorizer
	self := authorizer.AuthorizerFunc(func(ctx context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
		return full.Authorize(ctx, a)
	})
	var layered []authorizer.Authorizer
	for _, layer := range layers {
		layered = append(layered, layer(self, plain))
	}
	full = union.New(append(layered, plain)...)
	resolvers := []authorizer.RuleResolver{boot, local}
	if hook.Rules != nil {
		resolvers = append(resolvers, hook.Rules)
	}
	return full, distinctRules{union.NewRuleResolvers(resolvers...)}
}

// distinctRules lists each rule once: the bootstrap policy, a cluster's
// RBAC and the webhook grant the same rules (discovery URLs above all),
// which a SelfSubjectRulesReview (kubectl auth can-i --list) would repeat.
// Rules that only overlap stay, as in kcp.
type distinctRules struct {
	authorizer.RuleResolver
}

func (d distinctRules) RulesFor(ctx context.Context, u user.Info, namespace string) ([]authorizer.ResourceRuleInfo, []authorizer.NonResourceRuleInfo, bool, error) {
	res, nonRes, incomplete, err := d.RuleResolver.RulesFor(ctx, u, namespace)
	seen := map[string]bool{}
	keptRes := res[:0:0]
	for _, r := range res {
		key := fmt.Sprint("r", r.GetVerbs(), r.GetAPIGroups(), r.GetResources(), r.GetResourceNames())
		if !seen[key] {
			seen[key] = true
			keptRes = append(keptRes, r)
		}
	}
	// Non-resource rules are kept as the roles have them (kcp lists
	// system:discovery's and system:public-info-viewer's, which overlap).
	keptNonRes := nonRes[:0:0]
	for _, r := range nonRes {
		key := fmt.Sprint("n", r.GetVerbs(), r.GetNonResourceURLs())
		if !seen[key] {
			seen[key] = true
			keptNonRes = append(keptNonRes, r)
		}
	}
	return keptRes, keptNonRes, incomplete, err
}

// denyWildcard refuses the wildcard cluster to everybody that got this
// far, that is everybody but system:masters.
func denyWildcard(ctx context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	if clusters.IsWildcard(ctx) {
		return authorizer.DecisionDeny, "only system:masters may list or watch across all clusters", nil
	}
	return authorizer.DecisionNoOpinion, "", nil
}

// distinctReasons says each line of a refusal's reason once: the
// bootstrap policy and a cluster's own RBAC describe a request they do not
// grant in the same words, which the union would repeat in the 403.
type distinctReasons struct {
	authorizer.Authorizer
}

func (d distinctReasons) Authorize(ctx context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	decision, reason, err := d.Authorizer.Authorize(ctx, a)
	if !strings.Contains(reason, "\n") {
		return decision, reason, err
	}
	lines := strings.Split(reason, "\n")
	kept := make([]string, 0, len(lines))
	for _, line := range lines {
		if !slices.Contains(kept, line) {
			kept = append(kept, line)
		}
	}
	return decision, strings.Join(kept, "\n"), err
}

// withBootstrapRoles lets a cluster's bindings refer to bootstrap roles
// (cluster-admin, admin, edit, view) it does not store itself.
type withBootstrapRoles struct {
	rbac.RuleSource
}

func (s withBootstrapRoles) GetClusterRole(ctx context.Context, cluster, name string) (*rbacv1.ClusterRole, error) {
	r, err := s.RuleSource.GetClusterRole(ctx, cluster, name)
	if apierrors.IsNotFound(err) {
		return bootstrap.Source{}.GetClusterRole(ctx, cluster, name)
	}
	return r, err
}

// workspaceAccess keeps everybody out of a workspace who lacks verb
// "access" on non-resource "/" inside it (kcp's workspace content
// authorizer), and out of workspaces that are not Ready yet (but for
// systemAdmin in an Initializing one) or are Terminating. root is open
// to every authenticated user, as in kcp. With a webhook, a user without
// RBAC access gets the webhook's decision instead of a denial (RBAC is not
// asked further): relationship-based grants need no RoleBinding.
type workspaceAccess struct {
	workspaces Workspaces
	rbac       authorizer.Authorizer
	webhook    authorizer.Authorizer
}

func (w workspaceAccess) Authorize(ctx context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	cluster, ok := clusters.From(ctx)
	if !ok || cluster == clusters.Wildcard || a.GetUser() == nil || w.workspaces == nil {
		return authorizer.DecisionNoOpinion, "", nil
	}
	phase, path, ok := w.workspaces.Workspace(cluster)
	if !ok {
		// Shard-level paths (bare /metrics) are authorized in root on
		// every shard: the data is this shard's.
		shardLevel := !a.IsResourceRequest() && handlerchain.ShardLevelPaths[a.GetPath()]
		if shardLevel {
			return authorizer.DecisionNoOpinion, "", nil
		}
		if e, sharded := w.workspaces.(Elsewhere); sharded && e.Elsewhere(cluster) {
			return authorizer.DecisionDeny, fmt.Sprintf("logical cluster %s is not served by this shard", cluster), nil
		}
		return w.unknown(ctx, a, cluster)
	}
	if cluster == clusters.Root {
		return authorizer.DecisionNoOpinion, "", nil
	}
	// Deleting: as in kcp, whoever has access may still act inside, e.g.
	// to release the finalizers that hold its content.
	if phase != "Ready" && phase != "Deleting" && (phase != "Initializing" || !systemAdmin(ctx, a.GetUser())) {
		return authorizer.DecisionDeny, fmt.Sprintf("workspace %s is not ready (phase %s)", path, phase), nil
	}
	if serviceAccountOf(a.GetUser(), cluster) {
		// kcp: a workspace's own service accounts may enter it; RBAC
		// decides the rest.
		return authorizer.DecisionNoOpinion, "", nil
	}
	access := authorizer.AttributesRecord{User: a.GetUser(), Verb: "access", Path: "/"}
	if d, _, _ := w.rbac.Authorize(ctx, access); d == authorizer.DecisionAllow {
		return authorizer.DecisionNoOpinion, "", nil
	}
	if w.webhook != nil {
		if d, reason, err := w.webhook.Authorize(ctx, a); d == authorizer.DecisionAllow {
			return d, reason, err
		}
		// A member who may read in the workspace (discovery, as the
		// webhook grants it to members) is told which write was refused,
		// not that the workspace is closed to him. Reads are not probed:
		// the probe's answer is cached, and a refused read is how a user
		// waits for a grant (a cached refusal of /api would outlive it).
		if !a.IsReadOnly() {
			reads := authorizer.AttributesRecord{User: a.GetUser(), Verb: "get", Path: "/api"}
			if d, _, _ := w.webhook.Authorize(ctx, reads); d == authorizer.DecisionAllow {
				return authorizer.DecisionDeny, fmt.Sprintf("%s in workspace %s denied", describe(a), path), nil
			}
		}
	}
	return authorizer.DecisionDeny, fmt.Sprintf("access to workspace %s denied", path), nil
}

// Sharded is implemented by the Workspaces of a shard among several: it
// reports whether other shards are known.
type Sharded interface {
	Sharded() bool
}

// unknown decides in a cluster no shard holds. Among several shards it is
// closed as kcp's workspace content authorizer closes it ("LogicalCluster
// not found"), discovery included, to all but the system's own identities
// (system:masters is let through before); system: clusters are left to
// RBAC, and so is every cluster until the index has seen them all once.
// A single core keeps serving bare logical clusters (no LogicalCluster,
// RBAC alone decides), as it always has.
func (w workspaceAccess) unknown(ctx context.Context, a authorizer.Attributes, cluster string) (authorizer.Decision, string, error) {
	if s, ok := w.workspaces.(Sharded); !ok || !s.Sharded() {
		return authorizer.DecisionNoOpinion, "", nil
	}
	if strings.HasPrefix(cluster, "system:") || privileged.System(ctx, a.GetUser()) {
		return authorizer.DecisionNoOpinion, "", nil
	}
	if s, ok := w.workspaces.(interface{ HasSynced() bool }); ok && !s.HasSynced() {
		return authorizer.DecisionNoOpinion, "", nil
	}
	return authorizer.DecisionDeny, fmt.Sprintf("logical cluster %s not found", cluster), nil
}

// describe says what a request asks for: verb and resource (or path).
func describe(a authorizer.Attributes) string {
	if !a.IsResourceRequest() {
		return a.GetVerb() + " " + a.GetPath()
	}
	what := a.GetResource()
	if a.GetSubresource() != "" {
		what += "/" + a.GetSubresource()
	}
	if a.GetAPIGroup() != "" {
		what += "." + a.GetAPIGroup()
	}
	if a.GetName() != "" {
		what += " " + a.GetName()
	}
	if a.GetNamespace() != "" {
		what += " in namespace " + a.GetNamespace()
	}
	return a.GetVerb() + " " + what
}

// quietNoOpinion drops the reasons of a webhook that has no opinion: they
// describe its internals (which logical clusters it serves), not the
// request, and would end every refusal the webhook does not decide.
type quietNoOpinion struct {
	authorizer.Authorizer
}

func (q quietNoOpinion) Authorize(ctx context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	d, reason, err := q.Authorizer.Authorize(ctx, a)
	if d == authorizer.DecisionNoOpinion {
		reason = ""
	}
	return d, reason, err
}

// systemAdmin reports whether the request comes from the system's own
// credentials (privileged.System) or kcp-admin's group, not impersonated:
// they may act inside a workspace that is still initializing, as in kcp.
func systemAdmin(ctx context.Context, u user.Info) bool {
	if privileged.Impersonated(ctx) {
		return false
	}
	return privileged.InGroups(u) || slices.Contains(u.GetGroups(), bootstrap.KCPAdminGroup)
}

// NewBind returns the authorizer of the verb "bind" on APIExports, asked
// in the export's cluster: system:masters, the bootstrap policy and the
// cluster's RBAC, without the workspace access rule. As in kcp, a user
// granted bind on apiexports/<name> may bind the export without access to
// the rest of the provider's workspace.
func NewBind(stored rbac.RuleSource) authorizer.Authorizer {
	boot := rbac.New(bootstrap.Source{}, clusters.From)
	local := rbac.New(withBootstrapRoles{stored}, clusters.From)
	return distinctReasons{union.New(authorizerfactory.NewPrivilegedGroups(user.SystemPrivilegedGroup), boot, local)}
}

// serviceAccountOf reports whether u is a service account of cluster.
func serviceAccountOf(u user.Info, cluster string) bool {
	if !strings.HasPrefix(u.GetName(), "system:serviceaccount:") {
		return false
	}
	c := u.GetExtra()[serviceaccount.ClusterExtra]
	return len(c) == 1 && c[0] == cluster
}
