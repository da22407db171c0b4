package schema

import (
	"strconv"
	"strings"
)

// Sanitize makes s a valid GraphQL name: every character outside
// [A-Za-z0-9_] becomes '_', a leading digit gets a '_' in front and a
// leading "__" (reserved for introspection) gets an 'x'. The same input
// always gives the same name.
func Sanitize(s string) string {
	if s == "" {
		return "_"
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	out := b.String()
	if out[0] >= '0' && out[0] <= '9' {
		out = "_" + out
	}
	if strings.HasPrefix(out, "__") {
		out = "x" + out
	}
	return out
}

// Pascal joins the alphanumeric runs of s, each starting upper case:
// "example.com" gives "ExampleCom", "v1beta1" gives "V1beta1".
func Pascal(s string) string {
	var b strings.Builder
	up := true
	for _, r := range s {
		isAlnum := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
		if !isAlnum {
			up = true
			continue
		}
		if up && r >= 'a' && r <= 'z' {
			r -= 'a' - 'A'
		}
		up = false
		b.WriteRune(r)
	}
	out := b.String()
	if out == "" {
		return "X"
	}
	if out[0] >= '0' && out[0] <= '9' {
		out = "X" + out
	}
	return out
}

// nameSet hands out names unique within one scope: the first asker of a
// name gets it, later ones get name2, name3... Callers ask in a fixed order,
// so the result is deterministic.
type nameSet map[string]bool

func (n nameSet) take(name string) string {
	if !n[name] {
		n[name] = true
		return name
	}
	for i := 2; ; i++ {
		c := name + strconv.Itoa(i)
		if !n[c] {
			n[c] = true
			return c
		}
	}
}

// free reports whether name is still available.
func (n nameSet) free(name string) bool { return !n[name] }

// rank orders OpenAPI component names for naming: Kubernetes' core group
// first, then apimachinery, then other Kubernetes APIs, then everything
// else. The earlier a schema ranks, the shorter its GraphQL name, so a
// custom API can never take a built-in type's name.
func rank(component string) int {
	switch {
	case strings.HasPrefix(component, "io.k8s.api.core."):
		return 0
	case strings.HasPrefix(component, "io.k8s.apimachinery."):
		return 1
	case strings.HasPrefix(component, "io.k8s."):
		return 2
	default:
		return 3
	}
}

// validEnumValue reports whether v can be a GraphQL enum value as it is.
func validEnumValue(v string) bool {
	if v == "" || v == "true" || v == "false" || v == "null" || strings.HasPrefix(v, "__") {
		return false
	}
	return Sanitize(v) == v && !(v[0] >= '0' && v[0] <= '9')
}
