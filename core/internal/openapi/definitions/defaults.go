package definitions

import (
	"sort"
	"strings"
	"sync"

	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// Definitions are the generated definitions with kcp's defaults on the
// keys of its associative lists: an optional key property of a kcp type
// (a name starting with kcpPrefix) used as an x-kubernetes-list-map-keys
// key gets its type's zero value as default.
//
// kcp's CRDs carry these defaults (+kubebuilder:default:="" on
// GroupResource.group and PermissionClaim.identityHash), openapi-gen does
// not emit them. Server-side apply needs them: a list-map element without
// a key field and without a default for it has a different key than one
// with the field set to "", so applying {group: ""} onto a stored claim
// (whose empty group is omitted) would add a second claim instead of
// merging into the first.
func Definitions(ref common.ReferenceCallback) map[string]common.OpenAPIDefinition {
	defs := GetOpenAPIDefinitions(ref)
	for name, keys := range keyDefaults() {
		def, ok := defs[name]
		if !ok {
			continue
		}
		props := make(map[string]spec.Schema, len(def.Schema.Properties))
		for k, v := range def.Schema.Properties {
			props[k] = v
		}
		for key, value := range keys {
			p := props[key]
			p.Default = value
			props[key] = p
		}
		def.Schema.Properties = props
		defs[name] = def
	}
	return defs
}

// kcpPrefix starts the definition names of kcp's types.
const kcpPrefix = "com.github.kcp-dev."

// noDefaultInKCP are the definitions with optional list-map keys that
// kcp's CRDs publish without a default (v1alpha1's GroupResource.group has
// no +kubebuilder:default): published OpenAPI stays kcp's there.
var noDefaultInKCP = map[string]bool{
	kcpPrefix + "sdk.apis.apis.v1alpha1.PermissionClaim": true,
}

// keyRefPrefix names definitions in the references keyDefaults resolves.
const keyRefPrefix = "#/definitions/"

var (
	keyDefaultsOnce sync.Once
	keyDefaultsMap  map[string]map[string]any
)

// keyDefaults maps a definition name to the defaults its list-map key
// properties get.
func keyDefaults() map[string]map[string]any {
	keyDefaultsOnce.Do(func() {
		keyDefaultsMap = listMapKeyDefaults(GetOpenAPIDefinitions(func(name string) spec.Ref {
			return spec.MustCreateRef(keyRefPrefix + common.EscapeJsonPointer(name))
		}))
	})
	return keyDefaultsMap
}

// listMapKeyDefaults finds, in definitions whose references are
// keyRefPrefix+name, the optional key properties without a default of every
// associative list of a kcp type.
func listMapKeyDefaults(defs map[string]common.OpenAPIDefinition) map[string]map[string]any {
	out := map[string]map[string]any{}
	names := make([]string, 0, len(defs))
	for name := range defs {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if !strings.HasPrefix(name, kcpPrefix) {
			continue
		}
		for _, prop := range defs[name].Schema.Properties {
			keys := listMapKeys(prop)
			if len(keys) == 0 || prop.Items == nil || prop.Items.Schema == nil {
				continue
			}
			item := strings.TrimPrefix(prop.Items.Schema.Ref.String(), keyRefPrefix)
			item = strings.ReplaceAll(strings.ReplaceAll(item, "~1", "/"), "~0", "~")
			itemDef, ok := defs[item]
			if !ok || !strings.HasPrefix(item, kcpPrefix) || noDefaultInKCP[item] {
				continue
			}
			required := map[string]bool{}
			for _, r := range itemDef.Schema.Required {
				required[r] = true
			}
			for _, key := range keys {
				p, ok := itemDef.Schema.Properties[key]
				if !ok || required[key] || p.Default != nil {
					continue
				}
				zero, ok := zeroOf(p)
				if !ok {
					continue
				}
				if out[item] == nil {
					out[item] = map[string]any{}
				}
				out[item][key] = zero
			}
		}
	}
	return out
}

func listMapKeys(s spec.Schema) []string {
	if t, _ := s.Extensions.GetString("x-kubernetes-list-type"); t != "map" {
		return nil
	}
	raw, ok := s.Extensions["x-kubernetes-list-map-keys"]
	if !ok {
		return nil
	}
	var keys []string
	switch v := raw.(type) {
	case []string:
		keys = v
	case []any:
		for _, k := range v {
			if s, ok := k.(string); ok {
				keys = append(keys, s)
			}
		}
	}
	return keys
}

func zeroOf(s spec.Schema) (any, bool) {
	if len(s.Type) != 1 {
		return nil, false
	}
	switch s.Type[0] {
	case "string":
		return "", true
	case "integer":
		return int64(0), true
	case "boolean":
		return false, true
	}
	return nil, false
}
