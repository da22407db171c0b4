package workspace

import (
	"testing"

	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
)

func TestParentBaseRoot(t *testing.T) {
	for _, tc := range []struct {
		p, parent string
		hasParent bool
		base      string
		root      string
	}{
		{"root", "", false, "root", "root"},
		{"root:a", "root", true, "a", "root"},
		{"root:a:b", "root:a", true, "b", "root"},
		{"user:alice", "user", true, "alice", "user"},
		{"2x8fk3wnpy5d6sbb", "", false, "2x8fk3wnpy5d6sbb", "2x8fk3wnpy5d6sbb"},
	} {
		parent, ok := parentPath(tc.p)
		if parent != tc.parent || ok != tc.hasParent {
			t.Errorf("parentPath(%q) = %q, %v; want %q, %v", tc.p, parent, ok, tc.parent, tc.hasParent)
		}
		if got := baseName(tc.p); got != tc.base {
			t.Errorf("baseName(%q) = %q, want %q", tc.p, got, tc.base)
		}
		if got := rootOf(tc.p); got != tc.root {
			t.Errorf("rootOf(%q) = %q, want %q", tc.p, got, tc.root)
		}
	}
}

func TestJoinPath(t *testing.T) {
	for _, tc := range []struct{ a, b, want string }{
		{"", "root", "root"},
		{"root", "", "root"},
		{"root", "a", "root:a"},
		{"root:a", "b:c", "root:a:b:c"},
	} {
		if got := joinPath(tc.a, tc.b); got != tc.want {
			t.Errorf("joinPath(%q, %q) = %q, want %q", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestValidPath(t *testing.T) {
	for p, want := range map[string]bool{
		"root":             true,
		"root:org:team-1":  true,
		"user:alice":       true,
		"2x8fk3wnpy5d6sbb": true,
		"":                 false,
		"root::a":          false,
		"root:":            false,
		":root":            false,
		"root:-a":          false,
		"root:a/b":         false,
		"root:~":           false,
		"root:a b":         false,
	} {
		if got := validPath(p); got != want {
			t.Errorf("validPath(%q) = %v, want %v", p, got, want)
		}
	}
}

func TestResolveDots(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		wantErr  bool
	}{
		{"root", "root", false},
		{"root:a:..", "root", false},
		{"root:a:b:..:..", "root", false},
		{"root:a:.:b", "root:a:b", false},
		{"root:a:..:c", "root:c", false},
		{"root:..", "", true},
		{"root:a:..:..", "", true},
		{"..", "", true},
	} {
		got, err := resolveDots(tc.in)
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("resolveDots(%q) = %q, %v; want %q, err=%v", tc.in, got, err, tc.want, tc.wantErr)
		}
	}
}

func TestNormalizeName(t *testing.T) {
	for _, tc := range []struct {
		in, home, want string
		legacy         bool
	}{
		{"a", "/home/me", "a", false},
		{"a/b", "/home/me", "a:b", false},
		{":root:a", "/home/me", ":root:a", false},
		{"root", "/home/me", ":root", true},
		{"root:a", "/home/me", ":root:a", true},
		{"rootless", "/home/me", "rootless", false},
		{"/home/me", "/home/me", "~", false},
		{"/home/me/x", "/home/me", "~:x", false},
		{"/home/meow", "/home/me", ":home:meow", false},
		{"~", "", "~", false},
		{"-", "/home/me", "-", false},
		{"..", "/home/me", "..", false},
	} {
		got, legacy := normalizeName(tc.in, tc.home)
		if got != tc.want || legacy != tc.legacy {
			t.Errorf("normalizeName(%q, %q) = %q, %v; want %q, %v", tc.in, tc.home, got, legacy, tc.want, tc.legacy)
		}
	}
}

func TestResolveTarget(t *testing.T) {
	for _, tc := range []struct {
		current, name, want string
		wantErr             bool
	}{
		{"root", "a", "root:a", false},
		{"root:a", "b:c", "root:a:b:c", false},
		{"root:a", "..", "root", false},
		{"root:a:b", "..:..", "root", false},
		{"root:a:b", "..:c", "root:a:c", false},
		{"root:a", ":root:x:y", "root:x:y", false},
		{"root:a", ":user:alice", "user:alice", false},
		{"root:a", ":2x8fk3wnpy5d6sbb", "2x8fk3wnpy5d6sbb", false},
		{"root:a", ".", "root:a", false},
		{"root", "..", "", true},
		{"root:a", "a::b", "", true},
		{"root:a", "Bad Name", "", true},
		{"root:a", ":", "", true},
		{"", "a", "", true},
	} {
		got, err := resolveTarget(tc.current, tc.name)
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("resolveTarget(%q, %q) = %q, %v; want %q, err=%v", tc.current, tc.name, got, err, tc.want, tc.wantErr)
		}
	}
}

func TestParseClusterURL(t *testing.T) {
	for _, tc := range []struct {
		in, base, path string
		wantErr        bool
	}{
		{"https://h:6443/clusters/root", "https://h:6443", "root", false},
		{"https://h:6443/clusters/root:a:b/", "https://h:6443", "root:a:b", false},
		{"https://h/prefix/clusters/user:alice", "https://h/prefix", "user:alice", false},
		{"https://h:6443", "", "", true},
		{"https://h:6443/clusters/", "", "", true},
		{"https://h:6443/clusters/root/apis", "", "", true},
		{"/clusters/root", "", "", true},
	} {
		base, p, err := parseClusterURL(tc.in)
		if (err != nil) != tc.wantErr {
			t.Errorf("parseClusterURL(%q) error = %v, wantErr %v", tc.in, err, tc.wantErr)
			continue
		}
		if err != nil {
			continue
		}
		if base.String() != tc.base || p != tc.path {
			t.Errorf("parseClusterURL(%q) = %q, %q; want %q, %q", tc.in, base, p, tc.base, tc.path)
		}
		if back := clusterURL(base, p); back != stripSlash(tc.in) {
			t.Errorf("clusterURL(parseClusterURL(%q)) = %q", tc.in, back)
		}
	}
}

func stripSlash(s string) string {
	if len(s) > 0 && s[len(s)-1] == '/' {
		return s[:len(s)-1]
	}
	return s
}

func TestParseTypeRef(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want *tenancyv1alpha1.WorkspaceTypeReference
		str  string
	}{
		{"", nil, ""},
		{"universal", &tenancyv1alpha1.WorkspaceTypeReference{Name: "universal"}, "universal"},
		{"Universal", &tenancyv1alpha1.WorkspaceTypeReference{Name: "universal"}, "universal"},
		{"root:universal", &tenancyv1alpha1.WorkspaceTypeReference{Path: "root", Name: "universal"}, "root:universal"},
		{":root:org:team", &tenancyv1alpha1.WorkspaceTypeReference{Path: "root:org", Name: "team"}, "root:org:team"},
	} {
		got := parseTypeRef(tc.in)
		if (got == nil) != (tc.want == nil) || (got != nil && *got != *tc.want) {
			t.Errorf("parseTypeRef(%q) = %+v, want %+v", tc.in, got, tc.want)
		}
		if s := typeString(got); s != tc.str {
			t.Errorf("typeString(parseTypeRef(%q)) = %q, want %q", tc.in, s, tc.str)
		}
	}
}
