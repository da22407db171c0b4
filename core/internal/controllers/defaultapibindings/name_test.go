package defaultapibindings

import (
	"regexp"
	"strings"
	"testing"
)

// TestBindingName checks kcp's default binding names: <export>-<5 chars>,
// the export's name cut to fit 253 characters, the hash depending on the
// workspace, the export's path and its name.
func TestBindingName(t *testing.T) {
	re := regexp.MustCompile(`^(a+)-([0-9a-z]{5})$`)
	for _, tc := range []struct{ length, prefix int }{{1, 1}, {247, 247}, {248, 247}, {300, 247}} {
		got := BindingName("2abc", "root:provider", strings.Repeat("a", tc.length))
		m := re.FindStringSubmatch(got)
		if m == nil || len(m[1]) != tc.prefix {
			t.Errorf("name of an export of %d characters: %q, want %d characters of it, -, 5 of a hash", tc.length, got, tc.prefix)
		}
	}
	base := BindingName("2abc", "root:provider", "widgets")
	for what, other := range map[string]string{
		"another workspace": BindingName("3abc", "root:provider", "widgets"),
		"another path":      BindingName("2abc", "root:other", "widgets"),
	} {
		if other == base {
			t.Errorf("%s gives the same name %q", what, base)
		}
	}
	long1, long2 := strings.Repeat("x", 252), strings.Repeat("x", 250)+"yy"
	if BindingName("c", "p", long1) == BindingName("c", "p", long2) {
		t.Errorf("two long export names that differ after the cut give one name")
	}
	if base != BindingName("2abc", "root:provider", "widgets") {
		t.Errorf("the name is not stable")
	}
}
