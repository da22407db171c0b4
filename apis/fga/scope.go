package fga

import (
	"fmt"
	"strings"

	"github.com/meshplane/meshplane/apis/core/v1alpha1"
)

// Scope is what the tuples written for one organization may name in a
// store shared by organizations (docs/authorization.md, Scale). There the
// store no longer keeps organizations apart: the ids do, each object's
// carrying the logical cluster it lives in, so a tuple that named another
// organization's object would grant in that organization.
type Scope struct {
	// OrgsCluster is root:orgs' logical cluster and Org the organization's
	// name there: of root:orgs only the organization's own Account and
	// owner role are its.
	OrgsCluster, Org string
	// InOrg reports whether a logical cluster is one of the organization's
	// workspaces (its own or one of its accounts').
	InOrg func(cluster string) bool
}

// Allows returns nil when t names only what the organization may name:
// its object, and the object of a userset or object subject (a parent),
// in one of its clusters (root:orgs only for its own Account and owner role); users,
// the user wildcard and group members ("group:<name>#member", whose
// membership the webhook sends from the request's authentication) are
// not scoped. Group, user and role objects other than the organization's
// owner roles, other wildcards and ids whose cluster cannot be read are
// refused.
func (s Scope) Allows(t v1alpha1.Tuple) error {
	if err := s.allowsObject(t.Object); err != nil {
		return fmt.Errorf("tuple %s: object: %w", t, err)
	}
	if err := s.allowsUser(t.User); err != nil {
		return fmt.Errorf("tuple %s: user: %w", t, err)
	}
	return nil
}

func (s Scope) allowsUser(user string) error {
	object, relation, userset := strings.Cut(user, "#")
	typ, _, _ := strings.Cut(object, ":")
	switch {
	case !userset && typ == UserType:
		return nil
	case userset && typ == GroupType && relation == RelationMember && !strings.HasSuffix(object, ":*"):
		return nil
	}
	// A userset's object, or an object as subject (a parent).
	return s.allowsObject(object)
}

func (s Scope) allowsObject(object string) error {
	typ, rest, ok := strings.Cut(object, ":")
	if !ok || typ == "" || rest == "" {
		return fmt.Errorf("%q is no object id", object)
	}
	switch typ {
	case UserType, GroupType:
		return fmt.Errorf("%q: %s objects are not an organization's", object, typ)
	}
	if rest == "*" {
		return fmt.Errorf("%q: a wildcard", object)
	}
	segment := 0
	if typ == RoleType {
		// role:<account type>/<cluster>/<name>/owner (OwnerRole).
		if !strings.HasPrefix(rest, AccountType+"/") {
			return fmt.Errorf("%q: not an owner role", object)
		}
		segment = 1
	}
	cluster, err := clusterSegment(rest, segment)
	if err != nil {
		return fmt.Errorf("%q: %w", object, err)
	}
	if cluster == s.OrgsCluster {
		if object == AccountObject(s.OrgsCluster, s.Org) || object == OwnerRole(s.OrgsCluster, s.Org) {
			return nil
		}
		return fmt.Errorf("%q: in root:orgs, only organization %s's Account and owner role are its", object, s.Org)
	}
	if s.InOrg == nil || !s.InOrg(cluster) {
		return fmt.Errorf("%q: cluster %s is not organization %s's", object, cluster, s.Org)
	}
	return nil
}

// clusterSegment is segment i of an id's escaped segments, unescaped; in
// a shortened id only segments before the hash can be read.
func clusterSegment(rest string, i int) (string, error) {
	if h := strings.Index(rest, HashMarker); h >= 0 {
		rest = rest[:h]
	} else {
		rest += "/"
	}
	parts := strings.Split(rest, "/")
	// The last part is cut by the hash (or empty): not a whole segment.
	if i >= len(parts)-1 || parts[i] == "" {
		return "", fmt.Errorf("no cluster segment")
	}
	return UnescapeSegment(parts[i])
}
