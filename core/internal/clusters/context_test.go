package clusters

import "testing"

func TestNames(t *testing.T) {
	for _, tc := range []struct {
		in        string
		name, ok2 bool
	}{
		{"root", true, true},
		{"a1b2c3", true, true},
		{"system:admin", true, true},
		{"root:org:team", false, true},
		{"Bad_Name", false, false},
		{"..", false, false},
		{".", false, false},
		{"a/b", false, false},
		{"-a", false, false},
		{"", false, false},
		{"a::b", false, false},
	} {
		if got := IsValidName(tc.in); got != tc.name {
			t.Errorf("IsValidName(%q) = %v, want %v", tc.in, got, tc.name)
		}
		if got := IsValidPath(tc.in); got != tc.ok2 {
			t.Errorf("IsValidPath(%q) = %v, want %v", tc.in, got, tc.ok2)
		}
	}
}
