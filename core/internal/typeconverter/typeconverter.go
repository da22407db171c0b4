// Package typeconverter works around a reflection bug in server-side apply
// for the kinds it affects.
//
// The generic apiserver's server-side apply type converter reads typed Go
// objects by reflection (structured-merge-diff's value.NewValueReflect).
// That reflection builds each struct's field paths with
// append(fieldPath, index) on a shared slice, so in a struct inlined three
// levels deep (json:",inline" inside an inlined struct inside an inlined
// struct) every field reads as the last one. kcp's
// AcceptablePermissionClaim (-> ScopedPermissionClaim -> PermissionClaim ->
// GroupResource) is such a struct: {group: tenancy.kcp.io, resource:
// workspaces} reads as group "workspaces", and an apply writes the misread
// claim back.
//
// Unstructured converts the object with runtime.DefaultUnstructuredConverter
// (which reads such structs correctly) before the stock converter sees it,
// and drops list-map keys spelled out at their default from applied
// objects, which the typed objects never store.
// Affected tells which kinds of a scheme need it, and Reinstall serves a
// group installed by the generic server again with the fixed converter,
// leaving discovery and OpenAPI as the generic server made them.
package typeconverter

import (
	"fmt"
	"reflect"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	smdschema "sigs.k8s.io/structured-merge-diff/v6/schema"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
)

// Unstructured wraps a type converter so that it never reads a typed
// object by reflection: typed objects are converted to unstructured first.
func Unstructured(c managedfields.TypeConverter) managedfields.TypeConverter {
	return unstructuredConverter{c}
}

type unstructuredConverter struct {
	managedfields.TypeConverter
}

func (c unstructuredConverter) ObjectToTyped(obj runtime.Object, opts ...typed.ValidationOptions) (*typed.TypedValue, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		if obj == nil {
			return c.TypeConverter.ObjectToTyped(obj, opts...)
		}
		content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			return nil, fmt.Errorf("converting %T to unstructured: %w", obj, err)
		}
		u = &unstructured.Unstructured{Object: content}
		// ToUnstructured drops an empty TypeMeta; the stock converter reads
		// the kind from the object either way.
		u.GetObjectKind().SetGroupVersionKind(obj.GetObjectKind().GroupVersionKind())
		return c.TypeConverter.ObjectToTyped(u, opts...)
	}
	tv, err := c.TypeConverter.ObjectToTyped(u, opts...)
	if err != nil {
		return nil, err
	}
	// An applied object may spell out a list-map key at its default ("group:
	// \"\""), which the stored typed object omits: the merge would see a
	// change on every apply and write the object again. Such keys say
	// nothing (a missing key is its default), so they are dropped.
	content := u.UnstructuredContent()
	if !dropDefaultKeys(tv.Schema(), tv.TypeRef(), content, false) {
		return tv, nil
	}
	content = runtime.DeepCopyJSON(content)
	dropDefaultKeys(tv.Schema(), tv.TypeRef(), content, true)
	return c.TypeConverter.ObjectToTyped(&unstructured.Unstructured{Object: content}, opts...)
}

// dropDefaultKeys finds (and, when drop is set, deletes) the key fields of
// associative list items whose value is the key's default, in v of type
// tr. It tells whether there are any.
func dropDefaultKeys(s *smdschema.Schema, tr smdschema.TypeRef, v any, drop bool) bool {
	atom, ok := s.Resolve(tr)
	if !ok {
		return false
	}
	found := false
	switch {
	case atom.Map != nil:
		m, ok := v.(map[string]any)
		if !ok {
			return false
		}
		for k, fv := range m {
			ft := atom.Map.ElementType
			if f, ok := atom.Map.FindField(k); ok {
				ft = f.Type
			}
			if dropDefaultKeys(s, ft, fv, drop) {
				found = true
			}
		}
	case atom.List != nil:
		l, ok := v.([]any)
		if !ok {
			return false
		}
		var item *smdschema.Map
		if atom.List.ElementRelationship == smdschema.Associative && len(atom.List.Keys) > 0 {
			if a, ok := s.Resolve(atom.List.ElementType); ok {
				item = a.Map
			}
		}
		for _, e := range l {
			if m, ok := e.(map[string]any); ok && item != nil {
				for _, key := range atom.List.Keys {
					f, ok := item.FindField(key)
					if val, present := m[key]; ok && present && scalarEqual(val, f.Default) {
						found = true
						if drop {
							delete(m, key)
						}
					}
				}
			}
			if dropDefaultKeys(s, atom.List.ElementType, e, drop) {
				found = true
			}
		}
	}
	return found
}

// scalarEqual tells whether v is the scalar default d.
func scalarEqual(v, d any) bool {
	switch d.(type) {
	case string, bool, int64, float64:
		switch v.(type) {
		case string, bool, int64, float64:
			return v == d
		}
	}
	return false
}

// misreadDepth is the inline nesting at which reflection misreads fields:
// fields of a struct inlined this many levels deep.
const misreadDepth = 3

// Affected returns the kinds of a group version, sorted, whose Go types
// (or any type they contain) have a struct inlined misreadDepth or more
// levels deep.
func Affected(scheme *runtime.Scheme, gv schema.GroupVersion) []string {
	var out []string
	for kind, t := range scheme.KnownTypes(gv) {
		if strings.HasSuffix(kind, "List") || strings.HasSuffix(kind, "Options") || kind == "WatchEvent" {
			continue
		}
		if deepInline(t, map[reflect.Type]bool{}) {
			out = append(out, kind)
		}
	}
	sort.Strings(out)
	return out
}

// deepInline tells whether t, or a type reachable from it, has a struct
// inlined misreadDepth levels deep.
func deepInline(t reflect.Type, seen map[reflect.Type]bool) bool {
	for t.Kind() == reflect.Ptr || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || seen[t] {
		return false
	}
	seen[t] = true
	return inlineDepth(t, 0, seen)
}

// inlineDepth walks the fields of t, which is inlined depth levels deep.
func inlineDepth(t reflect.Type, depth int, seen map[reflect.Type]bool) bool {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Tag.Get("json") == "-" || (f.PkgPath != "" && !f.Anonymous) {
			continue
		}
		if isInline(f) {
			e := f.Type
			if e.Kind() == reflect.Ptr {
				e = e.Elem()
			}
			if e.Kind() == reflect.Struct {
				if depth+1 >= misreadDepth && e.NumField() > 1 {
					return true
				}
				if inlineDepth(e, depth+1, seen) {
					return true
				}
			}
			continue
		}
		if deepInline(f.Type, seen) {
			return true
		}
	}
	return false
}

// isInline follows structured-merge-diff's reading of json tags: a field
// is inlined when it is embedded and its tag gives no name.
func isInline(f reflect.StructField) bool {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	return f.Anonymous && name == ""
}
