package builtin

import (
	"reflect"

	"k8s.io/apimachinery/pkg/runtime"
)

func reflectNew(t reflect.Type) (runtime.Object, bool) {
	obj, ok := reflect.New(t).Interface().(runtime.Object)
	return obj, ok
}
