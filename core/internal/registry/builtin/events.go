package builtin

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
)

// eventsREST serves events.k8s.io/v1 Events from the core/v1 Event
// store, as kube-apiserver does: one object, two APIs. An event written
// through either is read through both, fields mapped as kube maps them
// (regarding = involvedObject, note = message, deprecated* = the core
// fields of the same name).
type eventsREST struct {
	core *genericregistry.Store
	table
}

func newEventsREST(core *genericregistry.Store) *eventsREST {
	return &eventsREST{core: core, table: table{columns: []column{
		{"Type", "string", func(o runtime.Object) any { return o.(*eventsv1.Event).Type }},
		{"Reason", "string", func(o runtime.Object) any { return o.(*eventsv1.Event).Reason }},
		{"Note", "string", func(o runtime.Object) any { return o.(*eventsv1.Event).Note }},
	}}}
}

var (
	_ rest.StandardStorage      = &eventsREST{}
	_ rest.ShortNamesProvider   = &eventsREST{}
	_ rest.SingularNameProvider = &eventsREST{}
)

func (r *eventsREST) New() runtime.Object     { return &eventsv1.Event{} }
func (r *eventsREST) NewList() runtime.Object { return &eventsv1.EventList{} }
func (r *eventsREST) Destroy()                {}
func (r *eventsREST) NamespaceScoped() bool   { return true }
func (r *eventsREST) GetSingularName() string { return "event" }
func (r *eventsREST) ShortNames() []string    { return []string{"ev"} }
func (r *eventsREST) ConvertToTable(ctx context.Context, obj runtime.Object, opts runtime.Object) (*metav1.Table, error) {
	return r.table.ConvertToTable(ctx, obj, opts)
}

func (r *eventsREST) Get(ctx context.Context, name string, opts *metav1.GetOptions) (runtime.Object, error) {
	obj, err := r.core.Get(ctx, name, opts)
	return toEventsV1(obj), err
}

func (r *eventsREST) List(ctx context.Context, opts *metainternalversion.ListOptions) (runtime.Object, error) {
	opts, err := coreEventListOptions(opts)
	if err != nil {
		return nil, err
	}
	obj, err := r.core.List(ctx, opts)
	if err != nil {
		return nil, err
	}
	return toEventsV1List(obj), nil
}

func (r *eventsREST) Watch(ctx context.Context, opts *metainternalversion.ListOptions) (watch.Interface, error) {
	opts, err := coreEventListOptions(opts)
	if err != nil {
		return nil, err
	}
	w, err := r.core.Watch(ctx, opts)
	if err != nil {
		return nil, err
	}
	return watch.Filter(w, func(e watch.Event) (watch.Event, bool) {
		e.Object = toEventsV1(e.Object)
		return e, true
	}), nil
}

func (r *eventsREST) Create(ctx context.Context, obj runtime.Object, createValidation rest.ValidateObjectFunc, opts *metav1.CreateOptions) (runtime.Object, error) {
	out, err := r.core.Create(ctx, toCoreEvent(obj), validateAsEventsV1(createValidation), opts)
	return toEventsV1(out), err
}

func (r *eventsREST) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc,
	updateValidation rest.ValidateObjectUpdateFunc, forceAllowCreate bool, opts *metav1.UpdateOptions) (runtime.Object, bool, error) {
	var validateUpdate rest.ValidateObjectUpdateFunc
	if updateValidation != nil {
		validateUpdate = func(ctx context.Context, obj, old runtime.Object) error {
			return updateValidation(ctx, toEventsV1(obj), toEventsV1(old))
		}
	}
	out, created, err := r.core.Update(ctx, name, coreUpdatedObject{objInfo}, validateAsEventsV1(createValidation), validateUpdate, forceAllowCreate, opts)
	return toEventsV1(out), created, err
}

func (r *eventsREST) Delete(ctx context.Context, name string, deleteValidation rest.ValidateObjectFunc, opts *metav1.DeleteOptions) (runtime.Object, bool, error) {
	out, immediate, err := r.core.Delete(ctx, name, validateAsEventsV1(deleteValidation), opts)
	return toEventsV1(out), immediate, err
}

func (r *eventsREST) DeleteCollection(ctx context.Context, deleteValidation rest.ValidateObjectFunc, opts *metav1.DeleteOptions,
	listOptions *metainternalversion.ListOptions) (runtime.Object, error) {
	listOptions, err := coreEventListOptions(listOptions)
	if err != nil {
		return nil, err
	}
	out, err := r.core.DeleteCollection(ctx, validateAsEventsV1(deleteValidation), opts, listOptions)
	if err != nil {
		return nil, err
	}
	return toEventsV1List(out), nil
}

// validateAsEventsV1 hands admission the object as the client sent it.
func validateAsEventsV1(v rest.ValidateObjectFunc) rest.ValidateObjectFunc {
	if v == nil {
		return nil
	}
	return func(ctx context.Context, obj runtime.Object) error { return v(ctx, toEventsV1(obj)) }
}

// coreUpdatedObject turns an update (or patch) written against
// events.k8s.io/v1 into one of the stored core/v1 Event.
type coreUpdatedObject struct {
	rest.UpdatedObjectInfo
}

func (u coreUpdatedObject) UpdatedObject(ctx context.Context, old runtime.Object) (runtime.Object, error) {
	obj, err := u.UpdatedObjectInfo.UpdatedObject(ctx, toEventsV1(old))
	if err != nil {
		return nil, err
	}
	return toCoreEvent(obj), nil
}

// eventsV1Fields maps events.k8s.io/v1 field selectors to core/v1 ones.
var eventsV1Fields = map[string]string{
	"regarding.kind": "involvedObject.kind", "regarding.namespace": "involvedObject.namespace", "regarding.name": "involvedObject.name",
	"regarding.uid": "involvedObject.uid", "regarding.apiVersion": "involvedObject.apiVersion",
	"regarding.resourceVersion": "involvedObject.resourceVersion", "regarding.fieldPath": "involvedObject.fieldPath",
	"reportingController": "reportingComponent", "deprecatedSource": "source",
}

func coreEventListOptions(in *metainternalversion.ListOptions) (*metainternalversion.ListOptions, error) {
	if in == nil || in.FieldSelector == nil || in.FieldSelector.Empty() {
		return in, nil
	}
	out := *in
	sel, err := in.FieldSelector.Transform(func(field, value string) (string, string, error) {
		if core, ok := eventsV1Fields[field]; ok {
			return core, value, nil
		}
		switch field {
		case "metadata.name", "metadata.namespace", "reason", "type":
			return field, value, nil
		}
		return "", "", fmt.Errorf("field label not supported: %s", field)
	})
	if err != nil {
		return nil, err
	}
	out.FieldSelector = sel
	return &out, nil
}

// toEventsV1 converts a stored core/v1 Event (or anything else, which it
// returns as is).
func toEventsV1(obj runtime.Object) runtime.Object {
	if c, ok := obj.(runtime.CacheableObject); ok {
		obj = c.GetObject()
	}
	e, ok := obj.(*corev1.Event)
	if !ok {
		return obj
	}
	out := &eventsv1.Event{
		ObjectMeta: *e.ObjectMeta.DeepCopy(), EventTime: e.EventTime, ReportingController: e.ReportingController,
		ReportingInstance: e.ReportingInstance, Action: e.Action, Reason: e.Reason, Regarding: e.InvolvedObject,
		Note: e.Message, Type: e.Type, DeprecatedSource: e.Source, DeprecatedFirstTimestamp: e.FirstTimestamp,
		DeprecatedLastTimestamp: e.LastTimestamp, DeprecatedCount: e.Count,
	}
	if e.Related != nil {
		r := *e.Related
		out.Related = &r
	}
	if e.Series != nil {
		out.Series = &eventsv1.EventSeries{Count: e.Series.Count, LastObservedTime: e.Series.LastObservedTime}
	}
	return out
}

// toCoreEvent converts an events.k8s.io/v1 Event to the stored core/v1
// Event (anything else is returned as is).
func toCoreEvent(obj runtime.Object) runtime.Object {
	e, ok := obj.(*eventsv1.Event)
	if !ok {
		return obj
	}
	out := &corev1.Event{
		ObjectMeta: *e.ObjectMeta.DeepCopy(), EventTime: e.EventTime, ReportingController: e.ReportingController,
		ReportingInstance: e.ReportingInstance, Action: e.Action, Reason: e.Reason, InvolvedObject: e.Regarding,
		Message: e.Note, Type: e.Type, Source: e.DeprecatedSource, FirstTimestamp: e.DeprecatedFirstTimestamp,
		LastTimestamp: e.DeprecatedLastTimestamp, Count: e.DeprecatedCount,
	}
	if e.Related != nil {
		r := *e.Related
		out.Related = &r
	}
	if e.Series != nil {
		out.Series = &corev1.EventSeries{Count: e.Series.Count, LastObservedTime: e.Series.LastObservedTime}
	}
	return out
}

func toEventsV1List(obj runtime.Object) runtime.Object {
	l, ok := obj.(*corev1.EventList)
	if !ok {
		return obj
	}
	out := &eventsv1.EventList{ListMeta: l.ListMeta, Items: make([]eventsv1.Event, len(l.Items))}
	for i := range l.Items {
		out.Items[i] = *toEventsV1(&l.Items[i]).(*eventsv1.Event)
	}
	return out
}
