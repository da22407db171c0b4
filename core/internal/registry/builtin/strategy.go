// Package builtin builds the registries of the Kubernetes APIs every
// logical cluster serves, on generic registry stores.
package builtin

import (
	"context"
	"reflect"

	"k8s.io/apimachinery/pkg/api/meta"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/names"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// strategy is the create, update and delete behaviour shared by the
// built-in kinds; what differs between kinds is data on the struct.
type strategy struct {
	runtime.ObjectTyper
	names.NameGenerator

	namespaced bool
	// hasStatus means status is written only through the status subresource.
	hasStatus bool
	// statusOnly makes this the status subresource's strategy.
	statusOnly bool
	// statusOnCreate keeps status on create.
	statusOnCreate bool
	// nameFn validates metadata.name.
	nameFn apivalidation.ValidateNameFunc
	// defaults fills defaults on create and update.
	defaults func(obj runtime.Object)
	// validate checks the kind's own fields.
	validate func(obj runtime.Object) field.ErrorList
	// validateSpec: see resource.
	validateSpec func(obj runtime.Object) field.ErrorList
	// onCreate and validateUpdate: see resource.
	onCreate       func(ctx context.Context, obj runtime.Object)
	validateUpdate func(obj, old runtime.Object) field.ErrorList
	// apiVersion names the fields reset on the main resource and status.
	apiVersion string
}

func (s *strategy) NamespaceScoped() bool           { return s.namespaced }
func (s *strategy) AllowCreateOnUpdate() bool       { return false }
func (s *strategy) AllowUnconditionalUpdate() bool  { return true }
func (s *strategy) Canonicalize(obj runtime.Object) {}

func (s *strategy) PrepareForCreate(ctx context.Context, obj runtime.Object) {
	if s.hasStatus && !s.statusOnCreate {
		clearField(obj, "Status")
	}
	if m, err := meta.Accessor(obj); err == nil && hasSpec(obj) {
		m.SetGeneration(1)
	}
	if s.defaults != nil {
		s.defaults(obj)
	}
	if s.onCreate != nil {
		s.onCreate(ctx, obj)
	}
}

func (s *strategy) PrepareForUpdate(ctx context.Context, obj, old runtime.Object) {
	switch {
	case s.statusOnly:
		// Keep everything but status (and metadata) as stored.
		status := fieldValue(obj, "Status")
		copyInto(obj, old)
		setField(obj, "Status", status)
		return
	case s.hasStatus:
		copyField(obj, old, "Status")
	}
	if s.defaults != nil {
		s.defaults(obj)
	}
	newMeta, err1 := meta.Accessor(obj)
	oldMeta, err2 := meta.Accessor(old)
	if err1 == nil && err2 == nil && hasSpec(obj) && !reflect.DeepEqual(specOf(obj), specOf(old)) {
		newMeta.SetGeneration(oldMeta.GetGeneration() + 1)
	}
}

func (s *strategy) Validate(ctx context.Context, obj runtime.Object) field.ErrorList {
	m, err := meta.Accessor(obj)
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	errs := apivalidation.ValidateObjectMetaAccessor(m, s.namespaced, s.nameFn, field.NewPath("metadata"))
	if s.validate != nil {
		errs = append(errs, s.validate(obj)...)
	}
	if s.validateSpec != nil && !s.statusOnly {
		errs = append(errs, s.validateSpec(obj)...)
	}
	return errs
}

func (s *strategy) ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	errs := s.Validate(ctx, obj)
	newMeta, err1 := meta.Accessor(obj)
	oldMeta, err2 := meta.Accessor(old)
	if err1 == nil && err2 == nil {
		errs = append(errs, apivalidation.ValidateObjectMetaAccessorUpdate(newMeta, oldMeta, field.NewPath("metadata"))...)
	}
	if s.validateUpdate != nil && !s.statusOnly {
		errs = append(errs, s.validateUpdate(obj, old)...)
	}
	return append(errs, validateRoleRefUnchanged(obj, old)...)
}

func (s *strategy) WarningsOnCreate(ctx context.Context, obj runtime.Object) []string { return nil }
func (s *strategy) WarningsOnUpdate(ctx context.Context, obj, old runtime.Object) []string {
	return nil
}

// GetResetFields tells server-side apply which fields this strategy owns.
func (s *strategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	if !s.hasStatus && !s.statusOnly {
		return nil
	}
	set := fieldpath.NewSet(fieldpath.MakePathOrDie("status"))
	if s.statusOnly {
		set = fieldpath.NewSet(fieldpath.MakePathOrDie("spec"), fieldpath.MakePathOrDie("metadata"))
	}
	return map[fieldpath.APIVersion]*fieldpath.Set{fieldpath.APIVersion(s.apiVersion): set}
}

// statusStrategy returns the strategy of the status subresource.
func (s *strategy) statusStrategy() *strategy {
	c := *s
	c.statusOnly = true
	c.hasStatus = false
	c.defaults = nil
	c.onCreate = nil
	return &c
}

// getAttrs returns labels and fields for selectors: metadata.name,
// metadata.namespace and, through extra, the kind's own selectable fields.
func getAttrs(extra func(obj runtime.Object) fields.Set) storage.AttrFunc {
	return func(obj runtime.Object) (labels.Set, fields.Set, error) {
		m, err := meta.Accessor(obj)
		if err != nil {
			return nil, nil, err
		}
		fs := fields.Set{"metadata.name": m.GetName()}
		if m.GetNamespace() != "" {
			fs["metadata.namespace"] = m.GetNamespace()
		}
		if extra != nil {
			for k, v := range extra(obj) {
				fs[k] = v
			}
		}
		return labels.Set(m.GetLabels()), fs, nil
	}
}

// hasSpec reports whether the kind has a spec, whose changes count as
// generations (as kube does for such kinds only).
func hasSpec(obj runtime.Object) bool {
	return reflect.ValueOf(obj).Elem().FieldByName("Spec").IsValid()
}

func specOf(obj runtime.Object) any {
	v := reflect.ValueOf(obj).Elem()
	for _, name := range []string{"Spec", "Data", "BinaryData", "Rules", "Subjects", "RoleRef", "Webhooks"} {
		if f := v.FieldByName(name); f.IsValid() {
			return f.Interface()
		}
	}
	return nil
}

func fieldValue(obj runtime.Object, name string) reflect.Value {
	f := reflect.ValueOf(obj).Elem().FieldByName(name)
	if !f.IsValid() {
		return reflect.Value{}
	}
	c := reflect.New(f.Type()).Elem()
	c.Set(f)
	return c
}

func setField(obj runtime.Object, name string, v reflect.Value) {
	if !v.IsValid() {
		return
	}
	if f := reflect.ValueOf(obj).Elem().FieldByName(name); f.IsValid() {
		f.Set(v)
	}
}

func clearField(obj runtime.Object, name string) {
	if f := reflect.ValueOf(obj).Elem().FieldByName(name); f.IsValid() {
		f.Set(reflect.Zero(f.Type()))
	}
}

func copyField(dst, src runtime.Object, name string) {
	setField(dst, name, fieldValue(src, name))
}

// copyInto replaces every field of dst but its object metadata with src's.
func copyInto(dst, src runtime.Object) {
	d, s := reflect.ValueOf(dst).Elem(), reflect.ValueOf(src).Elem()
	for i := 0; i < d.NumField(); i++ {
		if n := d.Type().Field(i).Name; n == "ObjectMeta" || n == "TypeMeta" {
			continue
		}
		d.Field(i).Set(s.Field(i))
	}
	// Labels and annotations may change through status; the rest of
	// metadata follows the stored object.
	dm, _ := meta.Accessor(dst)
	sm, _ := meta.Accessor(src)
	if dm != nil && sm != nil {
		dm.SetGeneration(sm.GetGeneration())
		dm.SetFinalizers(sm.GetFinalizers())
		dm.SetOwnerReferences(sm.GetOwnerReferences())
	}
}
