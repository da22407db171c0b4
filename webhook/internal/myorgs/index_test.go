package myorgs

import (
	"reflect"
	"testing"
)

func TestCandidates(t *testing.T) {
	const orgs = "orgscluster"
	orgOf := map[string]string{"acme-ws": "acme", "acme-team": "acme", "globex-ws": "globex"}
	x := NewIndex()
	x.SetAccount(orgs, "acme", "alice")
	x.SetAccount("acme-ws", "globex", "mallory") // an org Account outside root:orgs founds nothing
	x.SetRoleAssignment("acme-ws", "bob-member", "User", "bob")
	x.SetRoleAssignment("globex-ws", "devs", "Group", "devs")
	x.SetRoleAssignment("unknown-ws", "x", "User", "bob") // a cluster of no known organization
	x.SetStore(orgs, "globex", []string{"user:carol", "group:ops#member"})
	x.SetStore("acme-ws", "initech", []string{"user:bob"}) // a Store outside root:orgs counts for nothing

	get := func(user string, groups ...string) Candidates {
		return x.Candidates(user, groups, orgs, func(c string) string { return orgOf[c] })
	}
	for _, tc := range []struct {
		user   string
		groups []string
		want   Candidates
	}{
		{"alice", nil, Candidates{Founded: []string{"acme"}}},
		{"bob", nil, Candidates{Granted: []string{"acme"}}},
		{"mallory", nil, Candidates{}},
		{"dan", []string{"devs"}, Candidates{Granted: []string{"globex"}}},
		{"carol", nil, Candidates{Granted: []string{"globex"}}},
		{"erin", []string{"ops", "devs"}, Candidates{Granted: []string{"globex"}}},
		{"nobody", []string{"system:authenticated"}, Candidates{}},
	} {
		if got := get(tc.user, tc.groups...); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s %v: %+v, want %+v", tc.user, tc.groups, got, tc.want)
		}
	}

	// Revoked: the grant goes, and with it the candidate.
	x.SetRoleAssignment("acme-ws", "bob-member", "", "")
	if got := get("bob"); len(got.Founded)+len(got.Granted) != 0 {
		t.Errorf("bob after his grant is deleted: %+v", got)
	}
	// A grant whose subject changes moves.
	x.SetRoleAssignment("globex-ws", "devs", "User", "frank")
	if got := get("dan", "devs"); len(got.Granted) != 0 {
		t.Errorf("dan after the group grant names frank: %+v", got)
	}
	x.SetAccount(orgs, "acme", "")
	x.SetStore(orgs, "globex", nil)
	x.SetStore("acme-ws", "initech", nil)
	x.SetRoleAssignment("globex-ws", "devs", "", "")
	x.SetRoleAssignment("unknown-ws", "x", "", "")
	x.SetAccount("acme-ws", "globex", "")
	if n := x.Len(); n != 0 || len(x.bySubject) != 0 || len(x.founded) != 0 {
		t.Errorf("index not empty after everything is forgotten: %d, %v, %v", n, x.bySubject, x.founded)
	}
}
