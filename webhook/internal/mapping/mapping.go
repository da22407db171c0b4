// Package mapping turns a SubjectAccessReview about an account workspace
// into the OpenFGA Check the model (apis/fga) defines:
//
//   - get, update, patch, delete on an object: relation <verb> on
//     <type>:<cluster>/<namespace>/<name> (namespaced) or
//     <type>:<cluster>/<name> (cluster-scoped), ids from fga.ObjectID;
//   - create, list, watch: relation <verb>_<group>_<plural> on the parent,
//     the namespace (core_namespace:<cluster>/<ns>) or, for cluster-scoped
//     kinds, the account;
//   - with contextual tuples object -> namespace -> account, so no tuple per
//     object or namespace needs to be stored;
//   - discovery and OpenAPI paths (/api, /apis, /openapi, /version) and
//     self reviews (kubectl auth can-i, whoami): get on the account, i.e.
//     members only. Other non-resource paths: no check.
package mapping

import (
	"fmt"
	"strings"

	authorizationv1 "k8s.io/api/authorization/v1"

	"github.com/meshplane/meshplane/apis/fga"
)

// Tuple is one relationship.
type Tuple struct{ Object, Relation, User string }

// Query is one Check.
type Query struct {
	Object, Relation, User string
	// Contextual are tuples that hold for this Check only.
	Contextual []Tuple
}

// Key is a string that identifies the query (for caches).
func (q Query) Key() string {
	var b strings.Builder
	b.WriteString(q.User + "|" + q.Relation + "|" + q.Object)
	for _, t := range q.Contextual {
		b.WriteString("|" + t.Object + "#" + t.Relation + "@" + t.User)
	}
	return b.String()
}

// Workspace is the account workspace a review is about.
type Workspace struct {
	// Cluster is the workspace's logical cluster.
	Cluster string
	// Account is the OpenFGA object of its account.
	Account string
}

var verbs = map[string]bool{"get": true, "list": true, "watch": true, "create": true, "update": true, "patch": true, "delete": true}

// NoCheck explains why a review maps to no Check (the answer is then "no
// opinion").
type NoCheck struct{ Reason string }

func (e NoCheck) Error() string { return e.Reason }

// selfReviews are the reviews a user asks about himself (kubectl auth
// can-i, whoami): members of the account may create them, as every
// authenticated user may in Kubernetes (system:basic-user).
var selfReviews = map[string]bool{"authorization.k8s.io/selfsubjectaccessreviews": true,
	"authorization.k8s.io/selfsubjectrulesreviews": true, "authentication.k8s.io/selfsubjectreviews": true}

// ForSelfReview maps the creation of a self review: get on the account;
// ok is false for anything else.
func ForSelfReview(ws Workspace, user string, ra *authorizationv1.ResourceAttributes) (Query, bool) {
	if ra.Verb != "create" || !selfReviews[ra.Group+"/"+ra.Resource] {
		return Query{}, false
	}
	return Query{User: fga.UserID(user), Object: ws.Account, Relation: "get"}, true
}

// ForLogicalCluster maps a read of the workspace's own LogicalCluster
// (core.kcp.io logicalclusters "cluster", which `kubectl ws use` reads to
// enter a workspace) to get on the account: its members may enter. ok is
// false for anything else; writes stay RBAC's.
func ForLogicalCluster(ws Workspace, user string, ra *authorizationv1.ResourceAttributes) (Query, bool) {
	if ra.Group != "core.kcp.io" || ra.Resource != "logicalclusters" || ra.Subresource != "" || ra.Name != "cluster" || ra.Verb != "get" {
		return Query{}, false
	}
	return Query{User: fga.UserID(user), Object: ws.Account, Relation: "get"}, true
}

// MaxGroups is how many of a user's groups a Check carries (OpenFGA takes
// at most 100 contextual tuples; the object's place takes up to 3). A
// group past it grants nothing (fail closed).
const MaxGroups = 90

// WithGroups returns q with the user's groups as contextual tuples
// (group:<name> member <user>): a role granted to a group reaches its
// members. OpenFGA does not store who is in a group; the core says so in
// each review.
func WithGroups(q Query, groups []string) Query {
	if len(groups) == 0 {
		return q
	}
	if len(groups) > MaxGroups {
		groups = groups[:MaxGroups]
	}
	out := q
	out.Contextual = append(make([]Tuple, 0, len(q.Contextual)+len(groups)), q.Contextual...)
	seen := map[string]bool{}
	for _, g := range groups {
		if g == "" || seen[g] {
			continue
		}
		seen[g] = true
		out.Contextual = append(out.Contextual, Tuple{Object: fga.GroupID(g), Relation: fga.RelationMember, User: q.User})
	}
	return out
}

// iamResources are the grant API's resources (core.platform-mesh.io
// RoleAssignments and Invites, in the workspace whose account they grant
// on).
var iamResources = map[string]bool{"core.platform-mesh.io/roleassignments": true, "core.platform-mesh.io/invites": true}

// ForRoleAssignment maps a request on RoleAssignments or Invites to the
// account's IAM relations: reading them (get, list, watch) is
// get_iam_roles (members), creating, changing or deleting them (status
// included) manage_iam_roles (owners); ok is false for any other resource.
func ForRoleAssignment(ws Workspace, user string, ra *authorizationv1.ResourceAttributes) (Query, bool) {
	if !iamResources[ra.Group+"/"+ra.Resource] || !verbs[ra.Verb] {
		return Query{}, false
	}
	if ra.Subresource != "" && ra.Subresource != "status" {
		return Query{}, false
	}
	rel := fga.RelationManageIAMRoles
	if ra.Verb == "get" || ra.Verb == "list" || ra.Verb == "watch" {
		rel = fga.RelationGetIAMRoles
	}
	return Query{User: fga.UserID(user), Object: ws.Account, Relation: rel}, true
}

// IsResourceVerb reports whether verb maps to a Check.
func IsResourceVerb(verb string) bool { return verbs[verb] }

// ForResource maps a resource request; res is the model's view of
// ra's resource.
func ForResource(ws Workspace, user string, ra *authorizationv1.ResourceAttributes, res fga.Resource) (Query, error) {
	if !verbs[ra.Verb] {
		return Query{}, NoCheck{fmt.Sprintf("verb %q is not in the model", ra.Verb)}
	}
	if ra.Subresource != "" && ra.Subresource != "status" {
		return Query{}, NoCheck{fmt.Sprintf("subresource %q is not in the model", ra.Subresource)}
	}
	q := Query{User: fga.UserID(user)}
	// ns is the namespace's object; objNS the namespace in a namespaced
	// object's id (a cluster-scoped kind ignores ra.Namespace, which kube
	// sets to the name for namespaces themselves).
	var ns, objNS string
	if res.Namespaced {
		if ra.Namespace == "" {
			return Query{}, NoCheck{fmt.Sprintf("%s across all namespaces is not in the model", ra.Resource)}
		}
		ns, objNS = fga.NamespaceObject(ws.Cluster, ra.Namespace), ra.Namespace
	}
	parent := ws.Account
	if ns != "" {
		parent = ns
		q.Contextual = append(q.Contextual, Tuple{Object: ns, Relation: fga.RelationParent, User: ws.Account})
	}
	if fga.IsParentVerb(ra.Verb) {
		q.Object, q.Relation = parent, res.Relation(ra.Verb)
		return q, nil
	}
	if ra.Name == "" {
		return Query{}, NoCheck{fmt.Sprintf("%s of %s without a name is not in the model", ra.Verb, ra.Resource)}
	}
	// The namespace is part of a namespaced object's id: a grant on
	// secret dbcreds in one namespace says nothing about another's.
	q.Object, q.Relation = fga.ObjectID(res.Type(), ws.Cluster, objNS, ra.Name), ra.Verb
	q.Contextual = append(q.Contextual, Tuple{Object: q.Object, Relation: fga.RelationParent, User: parent})
	return q, nil
}

// discoveryPaths are the non-resource paths members may read.
var discoveryPaths = []string{"/api", "/apis", "/openapi", "/version"}

// ForNonResource maps a non-resource request: discovery and OpenAPI reads
// are a get on the account; anything else maps to no Check.
func ForNonResource(ws Workspace, user string, nra *authorizationv1.NonResourceAttributes) (Query, error) {
	if !IsDiscoveryPath(nra.Path) {
		return Query{}, NoCheck{fmt.Sprintf("non-resource path %q is not granted by the model", nra.Path)}
	}
	if nra.Verb != "get" && nra.Verb != "head" {
		return Query{}, NoCheck{fmt.Sprintf("verb %q on %q is not granted by the model", nra.Verb, nra.Path)}
	}
	return Query{User: fga.UserID(user), Object: ws.Account, Relation: "get"}, nil
}

// IsDiscoveryPath reports whether path is /api, /apis, /openapi,
// /version or below one of them.
func IsDiscoveryPath(path string) bool {
	for _, p := range discoveryPaths {
		if path == p || strings.HasPrefix(path, p+"/") {
			return true
		}
	}
	return false
}
