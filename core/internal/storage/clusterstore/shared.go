package clusterstore

import (
	"reflect"
	"unsafe"

	"k8s.io/apimachinery/pkg/runtime"
)

// Shared returns the object a watch cache event carries: for the watch
// cache's serialization-caching wrapper, the cache's own object, which the
// cache shares with every reader, where the wrapper's GetObject returns a
// deep copy. In-process informers keep what they watch: with GetObject
// they held a second copy of every object that changed since they listed
// (their lists already share the cache's objects), e.g. every APIBinding,
// Workspace and LogicalCluster after a burst of Account workspaces. The
// result must not be modified (as anything an informer's store holds).
// Objects that are not wrapped are returned as they are; a wrapper whose
// layout is not the one known falls back to GetObject.
func Shared(obj runtime.Object) runtime.Object {
	c, ok := obj.(runtime.CacheableObject)
	if !ok {
		return obj
	}
	v := reflect.ValueOf(c)
	if v.Kind() == reflect.Pointer && !v.IsNil() && v.Elem().Kind() == reflect.Struct {
		// cachingObject.object: set when the wrapper is made, before the
		// event is dispatched, and replaced only by its setters, which the
		// watchers of Added and Modified events never call.
		if f := v.Elem().FieldByName("object"); f.IsValid() && f.Kind() == reflect.Interface && f.CanAddr() {
			if inner, ok := reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem().Interface().(runtime.Object); ok && inner != nil {
				return inner
			}
		}
	}
	return c.GetObject()
}
