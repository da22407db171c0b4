// Package fga is the authorization model contract between the
// security-operator (which writes models and tuples into OpenFGA) and the
// rebac-authz-webhook (which turns SubjectAccessReviews into OpenFGA
// Checks): the core module, the module generated for every bound resource,
// and the names both sides derive from Kubernetes resources. The names are
// Platform Mesh's, so tuples written against Platform Mesh's model mean the
// same here.
package fga

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/meshplane/meshplane/apis/core/v1alpha1"
)

// The types every model has.
const (
	// UserType is the type of the users of the platform: user:<name>.
	UserType = "user"
	// RoleType groups users: role:<id>#assignee.
	RoleType = "role"
	// GroupType is a group of users as the core authenticates them:
	// group:<name>#member (members are contextual, sent by the webhook).
	GroupType = "group"
	// AccountType is the type of an Account (organization or account).
	AccountType = "core_platform-mesh_io_account"
	// NamespaceType is the type of a namespace in an account's workspace.
	NamespaceType = "core_namespace"
)

// The relations of the contract.
const (
	// RelationParent links an object to its parent (an account to its
	// parent account, a namespace to its account, an object to its
	// namespace or account). The tuple's user is the parent.
	RelationParent = "parent"
	// RelationOwner is the owner of an object.
	RelationOwner = "owner"
	// RelationMember is a member of an object; owners are members.
	RelationMember = "member"
	// RelationAssignee makes a user hold a role.
	RelationAssignee = "assignee"
)

// MaxNameLength is the longest type or relation name the contract
// produces (Platform Mesh's limit; OpenFGA's own limit for relations).
const MaxNameLength = 50

// hashLength is the number of hex digits of the hash that ends a shortened
// name.
const hashLength = 8

// ParentVerbs are the verbs checked on the parent (the namespace or the
// account) as "<verb>_<group>_<plural>", because the object has no name yet
// (create) or the request covers many objects (list, watch).
var ParentVerbs = []string{"create", "list", "watch"}

// ObjectVerbs are the relations every resource type has for the verbs on
// one object (watch is there for Platform Mesh's models; the webhook checks
// watch on the parent).
var ObjectVerbs = []string{"get", "update", "patch", "delete", "watch"}

// IsParentVerb reports whether verb is checked on the parent.
func IsParentVerb(verb string) bool {
	for _, v := range ParentVerbs {
		if v == verb {
			return true
		}
	}
	return false
}

// GroupName is the group as it appears in type and relation names: dots
// become underscores and the core group ("") is "core".
func GroupName(group string) string {
	if group == "" {
		return "core"
	}
	return strings.ReplaceAll(group, ".", "_")
}

// TypeName is the OpenFGA type of a resource's objects:
// "<group>_<singular>", e.g. "core_configmap", "apis_kcp_io_apibinding",
// "core_platform-mesh_io_account". A name longer than MaxNameLength is
// shortened deterministically (see Shorten).
func TypeName(group, singular string) string {
	return Shorten(GroupName(group) + "_" + strings.ToLower(singular))
}

// RelationName is the relation checked on the parent for a verb on a
// resource: "<verb>_<group>_<plural>", e.g. "create_core_configmaps",
// shortened like TypeName.
func RelationName(verb, group, plural string) string {
	return Shorten(verb + "_" + GroupName(group) + "_" + strings.ToLower(plural))
}

// Shorten returns name unchanged when it has at most MaxNameLength
// characters; a longer name is cut to its first 41 characters followed by
// "_" and the first 8 hex digits of the name's SHA-256, so two long names
// stay different and every component computes the same result.
func Shorten(name string) string {
	if len(name) <= MaxNameLength {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	return name[:MaxNameLength-hashLength-1] + "_" + hex.EncodeToString(sum[:])[:hashLength]
}

// AccountTuples are the tuples that make an account exist in the model:
// the creator is assigned the account's owner role, the role's assignees
// own the account and, for an account below an organization, the parent
// account is its parent. parentOrigin and parentName are empty for an
// organization.
func AccountTuples(originCluster, name, creator, parentOrigin, parentName string) []v1alpha1.Tuple {
	account := AccountObject(originCluster, name)
	role := OwnerRole(originCluster, name)
	var tuples []v1alpha1.Tuple
	if creator != "" {
		tuples = append(tuples, v1alpha1.Tuple{Object: role, Relation: RelationAssignee, User: UserID(creator)})
	}
	tuples = append(tuples, v1alpha1.Tuple{Object: account, Relation: RelationOwner, User: role + "#" + RelationAssignee})
	if parentName != "" {
		tuples = append(tuples, v1alpha1.Tuple{Object: account, Relation: RelationParent, User: AccountObject(parentOrigin, parentName)})
	}
	return tuples
}
