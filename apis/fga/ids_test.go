package fga

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"github.com/openfga/language/pkg/go/validation"

	"github.com/meshplane/meshplane/apis/core/v1alpha1"
)

func TestObjectID(t *testing.T) {
	tests := []struct {
		typ, cluster, ns, name, want string
	}{
		{AccountType, "2x8k1zq7", "", "acme", "core_platform-mesh_io_account:2x8k1zq7/acme"},
		{NamespaceType, "abc", "", "default", "core_namespace:abc/default"},
		{"core_secret", "abc", "prod", "dbcreds", "core_secret:abc/prod/dbcreds"},
		{"core_configmap", "abc", "kube-system", "a.b-c_d", "core_configmap:abc/kube-system/a.b-c_d"},
		{"rbac_authorization_k8s_io_clusterrole", "abc", "", "system:admin", "rbac_authorization_k8s_io_clusterrole:abc/system|3Aadmin"},
		{"rbac_authorization_k8s_io_role", "abc", "apps", "a#b c%d/e~f", "rbac_authorization_k8s_io_role:abc/apps/a|23b|20c|25d|2Fe|7Ef"},
		{"rbac_authorization_k8s_io_role", "abc", "apps", "ü", "rbac_authorization_k8s_io_role:abc/apps/|C3|BC"},
	}
	for _, tt := range tests {
		got := ObjectID(tt.typ, tt.cluster, tt.ns, tt.name)
		if got != tt.want {
			t.Errorf("ObjectID(%q, %q, %q, %q) = %q, want %q", tt.typ, tt.cluster, tt.ns, tt.name, got, tt.want)
		}
		if !validation.ValidateObject(got) {
			t.Errorf("ObjectID(%q, %q, %q, %q) = %q is not a valid OpenFGA object", tt.typ, tt.cluster, tt.ns, tt.name, got)
		}
	}
}

// The findings: the namespace is part of the id, and names that
// differ only by ":" and "." (or by where a separator falls) do not share
// one.
func TestObjectIDInjective(t *testing.T) {
	pairs := []struct{ a, b [3]string }{
		{[3]string{"c", "public", "dbcreds"}, [3]string{"c", "prod", "dbcreds"}},
		{[3]string{"c", "", "a:b.c"}, [3]string{"c", "", "a.b:c"}},
		{[3]string{"c", "", "system:admin"}, [3]string{"c", "", "system.admin"}},
		{[3]string{"c", "", "x:y"}, [3]string{"c", "", "x|3Ay"}},
		{[3]string{"c", "a", "b/c"}, [3]string{"c", "a/b", "c"}},
		{[3]string{"c", "", "a/b"}, [3]string{"c", "a", "b"}},
		{[3]string{"c/a", "", "b"}, [3]string{"c", "", "a/b"}},
		{[3]string{"c", "", "a*b"}, [3]string{"c", "", "a|2Ab"}},
	}
	for _, p := range pairs {
		a := ObjectID("core_secret", p.a[0], p.a[1], p.a[2])
		b := ObjectID("core_secret", p.b[0], p.b[1], p.b[2])
		if a == b {
			t.Errorf("%q and %q share the id %q", p.a, p.b, a)
		}
	}
	// Random triples over an alphabet of separators and escapes: every id is
	// valid for OpenFGA, reads back to its parts, is left alone by the
	// migration, and no two triples share one.
	alphabet := []string{"a", "b", ":", ".", "/", "%", "~", "#", " ", "*", "3", "A", "ü", "@", "|3A", "|"}
	word := func(r *rand.Rand) string {
		var b strings.Builder
		for range r.IntN(5) {
			b.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		return b.String()
	}
	// OpenFGA's rules (validation.ValidateObject), compiled once.
	typeAndID := regexp.MustCompile(fmt.Sprintf("^%s:%s$", validation.RuleType, validation.RuleID))
	object := regexp.MustCompile(fmt.Sprintf("^%s$", validation.RuleObject))
	valid := func(id string) bool { return typeAndID.MatchString(id) && object.MatchString(id) }
	r := rand.New(rand.NewPCG(28, 28))
	seen := map[string][3]string{}
	for range 20000 {
		parts := [3]string{word(r) + "c", word(r), word(r) + "n"}
		id := ObjectID("core_secret", parts[0], parts[1], parts[2])
		if prev, ok := seen[id]; ok && prev != parts {
			t.Fatalf("%q and %q share the id %q", prev, parts, id)
		}
		seen[id] = parts
		if !valid(id) {
			t.Fatalf("%q: id %q is not a valid OpenFGA object", parts, id)
		}
		typ, segs, err := ParseID(id)
		want := []string{parts[0], parts[2]}
		if parts[1] != "" {
			want = []string{parts[0], parts[1], parts[2]}
		}
		if err != nil || typ != "core_secret" || strings.Join(segs, "\x00") != strings.Join(want, "\x00") {
			t.Fatalf("ParseID(%q) = %q, %q, %v; want %q", id, typ, segs, err, want)
		}
		if m, changed := MigrateID(id); changed {
			t.Fatalf("the migration rewrote the current id %q to %q", id, m)
		}
		user := UserID(parts[0])
		if !valid(user) {
			t.Fatalf("UserID(%q) = %q is not a valid OpenFGA user", parts[0], user)
		}
	}
}

func TestLongObjectID(t *testing.T) {
	typ := TypeName("example.com", "widget")
	name := strings.Repeat("n", 253)
	long := ObjectID(typ, "abc", "apps", name)
	if len(long) != MaxObjectLength || !validation.ValidateObject(long) {
		t.Fatalf("object for a 253-character name is %d characters or invalid: %q", len(long), long)
	}
	prefix, hash, ok := strings.Cut(long, HashMarker)
	if !ok || len(hash) != 32 {
		t.Fatalf("shortened id %q does not end in %q and 32 characters of hash", long, HashMarker)
	}
	if !strings.HasPrefix(prefix, typ+":abc/apps/nnnn") || len(prefix) < 200 {
		t.Fatalf("shortened id %q keeps too little of the readable id", long)
	}
	if again := ObjectID(typ, "abc", "apps", name); again != long {
		t.Fatalf("not deterministic: %q then %q", long, again)
	}
	for _, other := range []string{
		ObjectID(typ, "abc", "apps", strings.Repeat("n", 252)+"m"),
		ObjectID(typ, "abc", "apps2", name),
		ObjectID(typ, "abd", "apps", name),
		ObjectID(typ, "abc", "apps", name+"n"),
	} {
		if other == long {
			t.Fatalf("two long ids are the same %q", long)
		}
	}
	// An id that fits is not shortened, and none that fits has the marker.
	fits := strings.Repeat("n", MaxObjectLength-len(typ+":abc/apps/"))
	if id := ObjectID(typ, "abc", "apps", fits); len(id) != MaxObjectLength || strings.Contains(id, HashMarker) {
		t.Fatalf("an id of exactly %d characters was changed: %q", MaxObjectLength, id)
	}
	// Escapes count: a name of 100 ":" is 300 characters escaped.
	if id := ObjectID(typ, "abc", "apps", strings.Repeat(":", 100)); len(id) > MaxObjectLength || !validation.ValidateObject(id) {
		t.Fatalf("escaped long id %q has %d characters or is invalid", id, len(id))
	}
	if _, _, err := ParseID(long); !errors.Is(err, ErrShortened) {
		t.Fatalf("ParseID of a shortened id: %v, want ErrShortened", err)
	}
}

func TestUserID(t *testing.T) {
	tests := []struct{ in, want string }{
		{"alice", "user:alice"},
		{"alice+test@example.com", "user:alice+test@example.com"},
		{"system:serviceaccount:default:robot", "user:system|3Aserviceaccount|3Adefault|3Arobot"},
		{"system.serviceaccount.default.robot", "user:system.serviceaccount.default.robot"},
		{"*", "user:|2A"},
		{"oidc:alice", "user:oidc|3Aalice"},
	}
	for _, tt := range tests {
		got := UserID(tt.in)
		if got != tt.want {
			t.Errorf("UserID(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if !validation.ValidateUser(got) || validation.ValidateUserWildcard(got) {
			t.Errorf("UserID(%q) = %q is not a valid OpenFGA user (or is a wildcard)", tt.in, got)
		}
	}
	long := UserID(strings.Repeat("é", 300))
	if len(long) > MaxObjectLength || !validation.ValidateUser(long) || long == UserID(strings.Repeat("é", 299)+"e") {
		t.Fatalf("long user %q: %d characters", long, len(long))
	}
}

func TestOwnerRole(t *testing.T) {
	if got, want := OwnerRole("orgs1", "acme"), "role:core_platform-mesh_io_account/orgs1/acme/owner"; got != want {
		t.Fatalf("OwnerRole = %q, want %q", got, want)
	}
	if OwnerRole("o", "a/b") == OwnerRole("o/a", "b") {
		t.Fatal("owner roles of different accounts are the same")
	}
}

func TestUnescapeSegmentRefusesOtherSpellings(t *testing.T) {
	for _, s := range []string{"|3a", "|61", "|3", "a:b", "a/b", "a*b", "|ZZ", "%41", "a~b"} {
		if got, err := UnescapeSegment(s); err == nil {
			t.Errorf("UnescapeSegment(%q) = %q, want an error", s, got)
		}
	}
}

func TestMigrateID(t *testing.T) {
	tests := []struct{ old, want string }{
		// Unchanged: the common names are spelled the same.
		{"core_platform-mesh_io_account:orgs1/acme", "core_platform-mesh_io_account:orgs1/acme"},
		{"role:core_platform-mesh_io_account/orgs1/acme/owner#assignee", "role:core_platform-mesh_io_account/orgs1/acme/owner#assignee"},
		{"user:alice@example.com", "user:alice@example.com"},
		{"user:*", "user:*"},
		// Service accounts, as the old format and Platform Mesh wrote them.
		{"user:system.serviceaccount.default.robot", "user:system|3Aserviceaccount|3Adefault|3Arobot"},
		{"user:system.serviceaccount.default.my.robot", "user:system|3Aserviceaccount|3Adefault|3Amy.robot"},
		// Characters the old format kept now are escaped.
		{"rbac_authorization_k8s_io_clusterrole:abc/a~b%c", "rbac_authorization_k8s_io_clusterrole:abc/a|7Eb|25c"},
		{"user:a/b", "user:a|2Fb"},
		// Already current.
		{"user:system|3Aserviceaccount|3Adefault|3Arobot", "user:system|3Aserviceaccount|3Adefault|3Arobot"},
	}
	for _, tt := range tests {
		got, changed := MigrateID(tt.old)
		if got != tt.want || changed != (tt.old != tt.want) {
			t.Errorf("MigrateID(%q) = %q, %v; want %q", tt.old, got, changed, tt.want)
		}
		if again, changed := MigrateID(got); changed {
			t.Errorf("MigrateID(%q) changed the migrated id again: %q", got, again)
		}
	}
	tu, changed := MigrateTuple(v1alpha1.Tuple{Object: AccountObject("o", "team"), Relation: "member", User: "user:system.serviceaccount.ns.robot"})
	if !changed || tu.User != UserID("system:serviceaccount:ns:robot") || tu.Object != AccountObject("o", "team") {
		t.Fatalf("MigrateTuple = %v, %v", tu, changed)
	}
}
