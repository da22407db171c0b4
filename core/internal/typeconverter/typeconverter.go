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
// (which reads such structs correctly) before the stock converter sees it.
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
	if _, ok := obj.(*unstructured.Unstructured); !ok && obj != nil {
		content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			return nil, fmt.Errorf("converting %T to unstructured: %w", obj, err)
		}
		u := &unstructured.Unstructured{Object: content}
		// ToUnstructured drops an empty TypeMeta; the stock converter reads
		// the kind from the object either way.
		u.GetObjectKind().SetGroupVersionKind(obj.GetObjectKind().GroupVersionKind())
		obj = u
	}
	return c.TypeConverter.ObjectToTyped(obj, opts...)
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
