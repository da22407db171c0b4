// Package requiredgroups enforces kcp's authorization.kcp.io/required-groups
// annotation of a workspace's LogicalCluster: a semicolon-separated list
// (OR) of comma-separated groups (AND); a user who is in none of the
// clauses is refused anything in the workspace. As in kcp, service
// accounts, kcp's logical cluster admins and system:masters are not
// bound by it, and system:kcp:admin and system:kcp:workspace-bootstrapper
// always satisfy it.
//
// The annotation comes from the Workspace when the LogicalCluster is
// created; a Workspace created by anybody but the system gets its parent's
// value, and only the system may change it on a Workspace or a
// LogicalCluster (kcp lets a workspace admin edit the LogicalCluster's).
package requiredgroups

import (
	"context"
	"fmt"
	"strings"

	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/meshplane/meshplane/core/internal/clusters"
)

// Annotation names the groups a workspace requires.
const Annotation = "authorization.kcp.io/required-groups"

var (
	// exempt are not bound by the annotation.
	exempt = []string{user.SystemPrivilegedGroup, "system:kcp:logical-cluster-admin", "system:kcp:external-logical-cluster-admin"}
	// always satisfy it.
	always = []string{"system:kcp:admin", "system:kcp:workspace-bootstrapper"}
)

// Authorizer refuses users who lack the groups their request's workspace
// requires, and has no opinion otherwise.
type Authorizer struct {
	// LogicalCluster returns the LogicalCluster of a cluster.
	LogicalCluster func(cluster string) (*corev1alpha1.LogicalCluster, bool)
}

// Authorize implements authorizer.Authorizer.
func (a Authorizer) Authorize(ctx context.Context, attrs authorizer.Attributes) (authorizer.Decision, string, error) {
	cluster, ok := clusters.From(ctx)
	if !ok || cluster == clusters.Wildcard {
		return authorizer.DecisionNoOpinion, "", nil
	}
	lc, ok := a.LogicalCluster(cluster)
	if !ok || lc.Annotations[Annotation] == "" {
		return authorizer.DecisionNoOpinion, "", nil
	}
	u := attrs.GetUser()
	if u == nil {
		return authorizer.DecisionNoOpinion, "", nil
	}
	if Satisfies(u, lc.Annotations[Annotation]) {
		return authorizer.DecisionNoOpinion, "", nil
	}
	return authorizer.DecisionDeny, fmt.Sprintf("user is not a member of required groups: %s", lc.Annotations[Annotation]), nil
}

// Satisfies reports whether u may act in a workspace requiring groups.
func Satisfies(u user.Info, required string) bool {
	if strings.HasPrefix(u.GetName(), "system:serviceaccount:") {
		return true
	}
	groups := sets.New(u.GetGroups()...)
	if groups.HasAny(exempt...) || groups.HasAny(always...) {
		return true
	}
	for _, clause := range strings.Split(required, ";") {
		if clause = strings.TrimSpace(clause); clause == "" {
			continue
		}
		if groups.HasAll(strings.Split(clause, ",")...) {
			return true
		}
	}
	return false
}
