package dynamic

import (
	"reflect"
	"sync"
	"unsafe"

	"k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/generic"
	"k8s.io/apiserver/pkg/cel/environment"
)

// Every stock webhook plugin builds its own CEL condition compiler (the
// CEL environments for matchConditions, about 400 KiB a plugin; kcp pays
// this per workspace). The compiler holds no per-plugin state, so all
// plugins share one: sharedCompiler replaces the plugin's own, which the
// garbage collector then frees. apiserver offers no setter, hence the
// reflection; TestSharedConditionCompiler fails if a new apiserver
// renames the field, and a plugin whose field is missing keeps its own.

var (
	sharedCompilerOnce sync.Once
	sharedCompilerVal  cel.ConditionCompiler
)

func sharedCompiler() cel.ConditionCompiler {
	sharedCompilerOnce.Do(func() {
		sharedCompilerVal = cel.NewConditionCompiler(environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()))
	})
	return sharedCompilerVal
}

// shareConditionCompiler makes w use the shared compiler; it reports
// whether it could.
func shareConditionCompiler(w *generic.Webhook) bool {
	f := reflect.ValueOf(w).Elem().FieldByName("filterCompiler")
	shared := reflect.ValueOf(sharedCompiler())
	if !f.IsValid() || !shared.Type().AssignableTo(f.Type()) {
		return false
	}
	reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem().Set(shared)
	return true
}
