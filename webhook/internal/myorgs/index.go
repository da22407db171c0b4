// Package myorgs answers "which organizations does this user have a role
// in" (the core's "My organizations" virtual workspace asks it). The
// answer is never taken from what a tenant writes about another
// organization: an index of every grant's subject (RoleAssignments in an
// organization's workspaces, the Store's tuples, an organization Account's
// founder) only narrows the candidates; each candidate is then decided as
// a read of that organization's Account by name is (its founder, or a
// Check of relation get in the organization's own OpenFGA store).
//
// Memory: the index keeps, per grant, its subject and where it lives (no
// object bodies: the watches strip everything else), so 10,000
// organizations with a few grants each cost a few MB.
package myorgs

import (
	"sort"
	"strings"
	"sync"

	"github.com/meshplane/meshplane/apis/fga"
	"github.com/meshplane/meshplane/webhook/internal/mapping"
)

// source is where a subject was granted: a RoleAssignment (its cluster
// and name; its organization is looked up when asked, the registry may
// learn the cluster later) or a Store (named after its organization).
type source struct {
	kind          byte // 'r': RoleAssignment, 's': Store
	cluster, name string
}

// Index maps subjects (fga user or group ids) to the grants naming them,
// and founders to the organizations they founded.
type Index struct {
	mu        sync.RWMutex
	bySubject map[string][]source // most subjects have one or a few grants
	subjects  map[source][]string
	// founded: creator -> organizations, from the org Accounts of
	// root:orgs (cluster kept, checked when asked).
	founded map[string][]founding
	founder map[string]founding // Account (cluster/name) -> its founding
}

type founding struct{ cluster, org, creator string }

// NewIndex returns an empty index.
func NewIndex() *Index {
	return &Index{bySubject: map[string][]source{}, subjects: map[source][]string{},
		founded: map[string][]founding{}, founder: map[string]founding{}}
}

// subjectKey is the index key of a tuple's user or a grant's subject:
// "user:<name>" or "group:<name>" (a group's "#member" dropped).
func subjectKey(user string) string {
	k, _, _ := strings.Cut(user, "#")
	return k
}

// SetRoleAssignment records the subject of a RoleAssignment (kind User or
// Group); an empty kind forgets it.
func (x *Index) SetRoleAssignment(cluster, name, kind, subject string) {
	var keys []string
	switch kind {
	case "User":
		keys = []string{fga.UserID(subject)}
	case "Group":
		keys = []string{fga.GroupID(subject)}
	}
	x.set(source{'r', cluster, name}, keys)
}

// SetStore records the users and groups of a Store's tuples (the Store
// of the organization named name, in cluster); nil forgets it.
func (x *Index) SetStore(cluster, name string, users []string) {
	keys := make([]string, 0, len(users))
	for _, u := range users {
		keys = append(keys, subjectKey(u))
	}
	x.set(source{'s', cluster, name}, keys)
}

func (x *Index) set(src source, keys []string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, k := range x.subjects[src] {
		if rest := without(x.bySubject[k], src); len(rest) == 0 {
			delete(x.bySubject, k)
		} else {
			x.bySubject[k] = rest
		}
	}
	delete(x.subjects, src)
	if len(keys) == 0 {
		return
	}
	seen := make([]string, 0, len(keys))
	for _, k := range keys {
		if k == "" || containsString(seen, k) {
			continue
		}
		seen = append(seen, k)
		x.bySubject[k] = append(x.bySubject[k], src)
	}
	x.subjects[src] = seen
}

// SetAccount records an Account of type org and its creator (cluster is
// where the Account lives); creator "" forgets it.
func (x *Index) SetAccount(cluster, name, creator string) {
	key := cluster + "/" + name
	x.mu.Lock()
	defer x.mu.Unlock()
	if old, ok := x.founder[key]; ok {
		if rest := without(x.founded[old.creator], old); len(rest) == 0 {
			delete(x.founded, old.creator)
		} else {
			x.founded[old.creator] = rest
		}
		delete(x.founder, key)
	}
	if creator == "" {
		return
	}
	f := founding{cluster: cluster, org: name, creator: creator}
	x.founder[key] = f
	x.founded[creator] = append(x.founded[creator], f)
}

// Candidates are the organizations a user may have a role in.
type Candidates struct {
	// Founded are organizations whose Account in orgsCluster names the
	// user as creator: decided.
	Founded []string
	// Granted are organizations some grant names the user (or one of
	// the groups) in, not founded by the user: to be checked.
	Granted []string
}

// Candidates returns the user's candidates, sorted; orgOf gives the
// organization of a RoleAssignment's cluster ("" unknown), orgsCluster is
// root:orgs' logical cluster (Stores and founding Accounts elsewhere
// count for nothing).
func (x *Index) Candidates(user string, groups []string, orgsCluster string, orgOf func(cluster string) string) Candidates {
	keys := []string{fga.UserID(user)}
	for i, g := range groups {
		if i >= mapping.MaxGroups {
			break
		}
		keys = append(keys, fga.GroupID(g))
	}
	founded := map[string]bool{}
	granted := map[string]bool{}
	x.mu.RLock()
	for _, f := range x.founded[user] {
		if f.cluster == orgsCluster {
			founded[f.org] = true
		}
	}
	for _, k := range keys {
		for _, src := range x.bySubject[k] {
			switch src.kind {
			case 'r':
				if org := orgOf(src.cluster); org != "" {
					granted[org] = true
				}
			case 's':
				if src.cluster == orgsCluster {
					granted[src.name] = true
				}
			}
		}
	}
	x.mu.RUnlock()
	var c Candidates
	for org := range founded {
		c.Founded = append(c.Founded, org)
	}
	for org := range granted {
		if !founded[org] {
			c.Granted = append(c.Granted, org)
		}
	}
	sort.Strings(c.Founded)
	sort.Strings(c.Granted)
	return c
}

// Len is the number of grants and founders indexed.
func (x *Index) Len() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return len(x.subjects) + len(x.founder)
}

// without returns s without v (s's array is reused).
func without[T comparable](s []T, v T) []T {
	out := s[:0]
	for _, e := range s {
		if e != v {
			out = append(out, e)
		}
	}
	clear(s[len(out):])
	return out
}

func containsString(s []string, v string) bool {
	for _, e := range s {
		if e == v {
			return true
		}
	}
	return false
}
