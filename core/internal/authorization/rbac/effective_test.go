package rbac

import (
	"encoding/json"
	"sort"
	"strings"
	"testing"

	"k8s.io/apiserver/pkg/authentication/user"
)

func TestEffectiveUsers(t *testing.T) {
	warrant := func(w Warrant) string {
		b, _ := json.Marshal(w)
		return string(b)
	}
	sa := func(cluster string) *user.DefaultInfo {
		return &user.DefaultInfo{Name: "system:serviceaccount:default:x", Groups: []string{"system:serviceaccounts", user.AllAuthenticated},
			Extra: map[string][]string{ClusterExtraKey: {cluster}}}
	}
	for _, tc := range []struct {
		name string
		u    user.Info
		want string // names of the effective users, sorted
	}{
		{"plain user", &user.DefaultInfo{Name: "bob", Groups: []string{user.AllAuthenticated}}, "bob"},
		{"service account at home", sa("c1"), "system:kcp:serviceaccount:c1:default:x,system:serviceaccount:default:x"},
		{"service account elsewhere: only authenticated and global", sa("c2"), "system:anonymous,system:kcp:serviceaccount:c2:default:x"},
		{"scoped in", &user.DefaultInfo{Name: "bob", Groups: []string{user.AllAuthenticated}, Extra: map[string][]string{ScopeExtraKey: {"cluster:c1"}}}, "bob"},
		{"scoped out", &user.DefaultInfo{Name: "bob", Groups: []string{user.AllAuthenticated}, Extra: map[string][]string{ScopeExtraKey: {"cluster:c2"}}}, "system:anonymous"},
		{"every scope value must name the cluster", &user.DefaultInfo{Name: "bob", Extra: map[string][]string{ScopeExtraKey: {"cluster:c1,cluster:c2", "cluster:c2"}}}, "system:anonymous"},
		{"warrant", &user.DefaultInfo{Name: "nobody", Extra: map[string][]string{WarrantExtraKey: {warrant(Warrant{User: "bob", Groups: []string{"admins"}})}}}, "bob,nobody"},
		{"service account warrant without cluster is skipped", &user.DefaultInfo{Name: "nobody", Extra: map[string][]string{WarrantExtraKey: {warrant(Warrant{User: "system:serviceaccount:default:x"})}}}, "nobody"},
		{"invalid warrant is skipped", &user.DefaultInfo{Name: "nobody", Extra: map[string][]string{WarrantExtraKey: {"{"}}}, "nobody"},
	} {
		var names []string
		for _, u := range EffectiveUsers("c1", tc.u) {
			names = append(names, u.GetName())
		}
		sort.Strings(names)
		if got := strings.Join(names, ","); got != tc.want {
			t.Errorf("%s: effective users %s, want %s", tc.name, got, tc.want)
		}
	}
	// Out of scope keeps, of the groups, system:authenticated, and gets
	// system:cluster:<cluster> of the clusters it comes from (kcp).
	for _, tc := range []struct {
		name string
		u    user.Info
		want string
	}{
		{"foreign service account", sa("c2"), "system:authenticated,system:cluster:c2"},
		{"scoped out", &user.DefaultInfo{Name: "bob", Groups: []string{user.AllAuthenticated, "admins"},
			Extra: map[string][]string{ScopeExtraKey: {"cluster:c2,cluster:c3"}}}, "system:authenticated,system:cluster:c2,system:cluster:c3"},
		{"scoped out, two scope values", &user.DefaultInfo{Name: "bob", Groups: []string{user.AllAuthenticated},
			Extra: map[string][]string{ScopeExtraKey: {"cluster:c2,cluster:c3", "cluster:c3"}}}, "system:authenticated,system:cluster:c3"},
	} {
		var groups []string
		for _, u := range EffectiveUsers("c1", tc.u) {
			if u.GetName() == user.Anonymous {
				groups = append(groups, u.GetGroups()...)
			}
		}
		if got := strings.Join(groups, ","); got != tc.want {
			t.Errorf("%s: groups of the anonymous identity %s, want %s", tc.name, got, tc.want)
		}
	}
}
