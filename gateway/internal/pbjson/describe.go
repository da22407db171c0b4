// Package pbjson reads the core's protobuf answers for built-in kinds and
// writes what a GraphQL selection reads of them as JSON. The core encodes
// a list of 100 configmaps as protobuf in 0.7x the time it takes as JSON,
// and unselected members (managedFields, most of an object) are skipped by
// their length instead of being scanned.
//
// Two ways out: Transcode writes an object as the core's JSON would hold
// it, keeping the members a Projection names; a Plan (Compile, from the
// executor's Specs) writes a list's items straight in a selection's order
// with the executor's coercions, no JSON in between.
//
// The wire layout of each kind comes from its Go type (the same Kubernetes
// libraries as the core's): protobuf struct tags give field numbers, json
// tags give names and omitempty, and the few types with their own JSON
// form (times, quantities, int-or-string, durations, raw JSON) are written
// as their MarshalJSON would.
package pbjson

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
)

// kinds are the Go types of the Kubernetes groups the core serves built in
// (and so encodes as protobuf) that have lists. A kind not here (one
// served through a CRD, or a group the core may add later) comes as JSON:
// only slower. client-go's whole scheme would double the binary.
var kinds = runtime.NewScheme()

func init() {
	for _, add := range []func(*runtime.Scheme) error{
		corev1.AddToScheme, rbacv1.AddToScheme, coordinationv1.AddToScheme, eventsv1.AddToScheme,
		admissionregistrationv1.AddToScheme, certificatesv1.AddToScheme,
	} {
		utilruntime.Must(add(kinds))
	}
}

// kind is how a field's wire value is written as JSON.
type kind uint8

const (
	kString kind = iota
	kBytes       // base64, as encoding/json writes []byte
	kInt
	kUint
	kBool
	kFloat
	kMessage
	kTime      // metav1.Time: RFC 3339, seconds
	kMicroTime // metav1.MicroTime: RFC 3339, microseconds
	kQuantity  // resource.Quantity: its canonical string
	kDuration  // metav1.Duration: time.Duration's String
	kIntOrString
	kRaw // metav1.FieldsV1, runtime.RawExtension: the raw JSON
)

// field is one protobuf field of a message.
type field struct {
	name      string // JSON name; "" for a message inlined into its parent
	kind      kind
	bits      int // of a number
	omitEmpty bool
	pointer   bool
	repeated  bool   // a list of elem
	elem      *field // a list's items
	mapVal    *field // a map's values (keys are strings)
	msg       *message
}

// message is the layout of a struct: its fields by protobuf number and
// by JSON name (with the members of inlined messages).
type message struct {
	fields []*field
	byName map[string]fieldRef
}

// fieldRef is a member of a message: field num, or field num of the
// inlined message in field via (0 when not inlined).
type fieldRef struct {
	num, via uint64
	f        *field
}

func (m *message) field(num uint64) *field {
	if num < uint64(len(m.fields)) {
		return m.fields[num]
	}
	return nil
}

var (
	mu       sync.Mutex
	messages = map[reflect.Type]*message{}
	failed   = map[reflect.Type]error{}
	// byKind caches the layout of each GroupVersionKind (nil: not
	// supported, the JSON answer is used).
	byKind sync.Map // schema.GroupVersionKind -> *message
)

// Supports reports whether objects of gvk can be transcoded: its Go type is
// known and every type it reaches has a supported wire form.
func Supports(gvk schema.GroupVersionKind) bool {
	return layoutOf(gvk) != nil
}

func layoutOf(gvk schema.GroupVersionKind) *message {
	if m, ok := byKind.Load(gvk); ok {
		return m.(*message)
	}
	var m *message
	if t, ok := kinds.AllKnownTypes()[gvk]; ok {
		mu.Lock()
		m, _ = describe(t)
		mu.Unlock()
	}
	byKind.Store(gvk, m)
	return m
}

var (
	timeType        = reflect.TypeFor[metav1.Time]()
	microTimeType   = reflect.TypeFor[metav1.MicroTime]()
	durationType    = reflect.TypeFor[metav1.Duration]()
	quantityType    = reflect.TypeFor[resource.Quantity]()
	intOrStringType = reflect.TypeFor[intstr.IntOrString]()
	fieldsV1Type    = reflect.TypeFor[metav1.FieldsV1]()
	rawExtType      = reflect.TypeFor[runtime.RawExtension]()
	jsonMarshaler   = reflect.TypeFor[json.Marshaler]()
	protoUnmarshal  = "Unmarshal"
)

var special = map[reflect.Type]kind{
	timeType: kTime, microTimeType: kMicroTime, durationType: kDuration, quantityType: kQuantity,
	intOrStringType: kIntOrString, fieldsV1Type: kRaw, rawExtType: kRaw,
}

// describe returns the layout of struct type t (mu held). A type that
// refers to itself gets its message before its fields are filled in.
func describe(t reflect.Type) (*message, error) {
	if m, ok := messages[t]; ok {
		return m, nil
	}
	if err, ok := failed[t]; ok {
		return nil, err
	}
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("%v is not a struct", t)
	}
	if t.Implements(jsonMarshaler) || reflect.PointerTo(t).Implements(jsonMarshaler) {
		return nil, fail(t, fmt.Errorf("%v has its own JSON form", t))
	}
	m := &message{}
	messages[t] = m
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		tag := sf.Tag.Get("protobuf")
		if tag == "" {
			continue // not on the wire (TypeMeta, inlined in JSON only)
		}
		num, f, err := fieldOf(sf, tag)
		if err != nil {
			delete(messages, t)
			return nil, fail(t, fmt.Errorf("%v.%s: %w", t, sf.Name, err))
		}
		if f == nil {
			continue
		}
		for uint64(len(m.fields)) <= num {
			m.fields = append(m.fields, nil)
		}
		m.fields[num] = f
	}
	m.byName = map[string]fieldRef{}
	for num, f := range m.fields {
		switch {
		case f == nil:
		case f.name != "":
			m.byName[f.name] = fieldRef{num: uint64(num), f: f}
		default:
			for name, ref := range f.msg.byName {
				if ref.via == 0 {
					m.byName[name] = fieldRef{num: ref.num, via: uint64(num), f: ref.f}
				}
			}
		}
	}
	return m, nil
}

func fail(t reflect.Type, err error) error {
	failed[t] = err
	return err
}

// fieldOf describes one struct field from its protobuf and json tags.
func fieldOf(sf reflect.StructField, pbTag string) (uint64, *field, error) {
	parts := strings.Split(pbTag, ",")
	if len(parts) < 2 {
		return 0, nil, fmt.Errorf("protobuf tag %q", pbTag)
	}
	num, err := strconv.ParseUint(parts[1], 10, 32)
	if err != nil || num == 0 {
		return 0, nil, fmt.Errorf("protobuf tag %q", pbTag)
	}
	name, opts, _ := strings.Cut(sf.Tag.Get("json"), ",")
	if name == "-" {
		return 0, nil, fmt.Errorf("on the wire but not in JSON")
	}
	inline := strings.Contains(","+opts+",", ",inline,")
	if name == "" && !inline {
		name = sf.Name
	}
	f, err := valueField(sf.Type)
	if err != nil {
		return 0, nil, err
	}
	f.name = name
	f.omitEmpty = strings.Contains(","+opts+",", ",omitempty,")
	if inline {
		if f.kind != kMessage || f.repeated || f.mapVal != nil || f.pointer {
			return 0, nil, fmt.Errorf("inlined field is not a struct")
		}
		f.name = ""
	}
	return num, f, nil
}

// valueField describes a value of type t (a field's type, a list's items
// or a map's values).
func valueField(t reflect.Type) (*field, error) {
	f := &field{}
	if t.Kind() == reflect.Pointer {
		f.pointer = true
		t = t.Elem()
	}
	if k, ok := special[t]; ok {
		f.kind = k
		return f, nil
	}
	switch t.Kind() {
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			f.kind = kBytes
			return f, nil
		}
		if t.Name() != "" {
			if _, ok := reflect.PointerTo(t).MethodByName(protoUnmarshal); ok {
				// A named list with its own message (ExtraValue).
				return nil, fmt.Errorf("%v is a list wrapped in a message", t)
			}
		}
		if f.pointer {
			return nil, fmt.Errorf("pointer to a list")
		}
		elem, err := valueField(t.Elem())
		if err != nil {
			return nil, err
		}
		if elem.repeated || elem.mapVal != nil {
			return nil, fmt.Errorf("list of lists or maps")
		}
		return &field{repeated: true, elem: elem}, nil
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			return nil, fmt.Errorf("map keyed by %v", t.Key())
		}
		val, err := valueField(t.Elem())
		if err != nil {
			return nil, err
		}
		if val.repeated || val.mapVal != nil {
			return nil, fmt.Errorf("map of lists or maps")
		}
		f.mapVal = val
		return f, nil
	case reflect.Struct:
		m, err := describe(t)
		if err != nil {
			return nil, err
		}
		f.kind, f.msg = kMessage, m
		return f, nil
	case reflect.String:
		f.kind = kString
	case reflect.Bool:
		f.kind = kBool
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		f.kind, f.bits = kInt, t.Bits()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		f.kind, f.bits = kUint, t.Bits()
	case reflect.Float32, reflect.Float64:
		f.kind, f.bits = kFloat, t.Bits()
	default:
		return nil, fmt.Errorf("unsupported type %v", t)
	}
	if t.Implements(jsonMarshaler) || reflect.PointerTo(t).Implements(jsonMarshaler) {
		return nil, fmt.Errorf("%v has its own JSON form", t)
	}
	return f, nil
}
