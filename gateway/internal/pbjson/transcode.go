package pbjson

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Projection selects the JSON members to keep, by name: a member maps to
// the projection of its value, nil for all of it. A nil Projection keeps
// everything.
type Projection map[string]Projection

// ContentType is the media type of the core's protobuf answers.
const ContentType = "application/vnd.kubernetes.protobuf"

// magic starts every protobuf answer of the core (runtime.Unknown follows).
var magic = []byte("k8s\x00")

// ErrUnsupported is returned for an answer of a kind this package does not
// know; the caller asks for JSON instead.
var ErrUnsupported = errors.New("pbjson: kind not supported")

// Transcode writes the object in the core's protobuf answer b to dst as
// JSON, apiVersion and kind first, keeping what proj selects.
func Transcode(dst *bytes.Buffer, b []byte, proj Projection) error {
	gvk, raw, err := unwrap(b)
	if err != nil {
		return err
	}
	m := layoutOf(gvk)
	if m == nil {
		return ErrUnsupported
	}
	apiVersion, kindName := []byte(gvk.GroupVersion().String()), []byte(gvk.Kind)
	dst.WriteString(`{"apiVersion":`)
	writeString(dst, apiVersion)
	dst.WriteString(`,"kind":`)
	writeString(dst, kindName)
	first := false
	if err := writeMessage(dst, raw, m, proj, &first); err != nil {
		return err
	}
	dst.WriteByte('}')
	return nil
}

// unwrap reads the envelope of a protobuf answer: the kind and the
// object's message.
func unwrap(b []byte) (schema.GroupVersionKind, []byte, error) {
	if !bytes.HasPrefix(b, magic) {
		return schema.GroupVersionKind{}, nil, fmt.Errorf("pbjson: not a Kubernetes protobuf answer")
	}
	// runtime.Unknown: 1 TypeMeta{1 apiVersion, 2 kind}, 2 raw, 3
	// contentEncoding, 4 contentType.
	var apiVersion, kindName, raw, encoding []byte
	r := reader{b: b[len(magic):]}
	for num, w, ok := r.next(); ok; num, w, ok = r.next() {
		switch num {
		case 1:
			av, k, _, err := pair(w.val)
			if err != nil {
				return schema.GroupVersionKind{}, nil, err
			}
			apiVersion, kindName = av.val, k.val
		case 2:
			raw = w.val
		case 3:
			encoding = w.val
		}
	}
	if r.err != nil {
		return schema.GroupVersionKind{}, nil, r.err
	}
	if len(encoding) > 0 {
		return schema.GroupVersionKind{}, nil, fmt.Errorf("pbjson: content encoding %q", encoding)
	}
	gv, err := schema.ParseGroupVersion(string(apiVersion))
	if err != nil {
		return schema.GroupVersionKind{}, nil, fmt.Errorf("pbjson: %w", err)
	}
	return gv.WithKind(string(kindName)), raw, nil
}

// wireValue is one field occurrence: varints and fixed values in v,
// length-delimited ones in val.
type wireValue struct {
	wt  int
	v   uint64
	val []byte
}

// reader reads the fields of one message.
type reader struct {
	b   []byte
	i   int
	err error
}

var (
	errTruncated = errors.New("pbjson: truncated message")
	errWireType  = errors.New("pbjson: unexpected wire type")
)

// next returns the next field (false at the end or on an error, in r.err).
func (r *reader) next() (uint64, wireValue, bool) {
	if r.i >= len(r.b) || r.err != nil {
		return 0, wireValue{}, false
	}
	b := r.b
	key, n := binary.Uvarint(b[r.i:])
	if n <= 0 {
		return r.fail(errTruncated)
	}
	r.i += n
	w := wireValue{wt: int(key & 7)}
	switch w.wt {
	case 0:
		w.v, n = binary.Uvarint(b[r.i:])
		if n <= 0 {
			return r.fail(errTruncated)
		}
		r.i += n
	case 1:
		if len(b)-r.i < 8 {
			return r.fail(errTruncated)
		}
		w.v = binary.LittleEndian.Uint64(b[r.i:])
		r.i += 8
	case 2:
		l, n := binary.Uvarint(b[r.i:])
		if n <= 0 || l > uint64(len(b)-r.i-n) {
			return r.fail(errTruncated)
		}
		r.i += n
		w.val = b[r.i : r.i+int(l) : r.i+int(l)]
		r.i += int(l)
	case 5:
		if len(b)-r.i < 4 {
			return r.fail(errTruncated)
		}
		w.v = uint64(binary.LittleEndian.Uint32(b[r.i:]))
		r.i += 4
	default:
		return r.fail(fmt.Errorf("pbjson: wire type %d", w.wt))
	}
	return key >> 3, w, true
}

func (r *reader) fail(err error) (uint64, wireValue, bool) {
	r.err = err
	return 0, wireValue{}, false
}

// pair reads fields 1 and 2 of message b (a TypeMeta, a map entry).
func pair(b []byte) (one, two wireValue, has2 bool, err error) {
	r := reader{b: b}
	for num, w, ok := r.next(); ok; num, w, ok = r.next() {
		switch num {
		case 1:
			one = w
		case 2:
			two, has2 = w, true
		}
	}
	return one, two, has2, r.err
}

// writeMessage writes the members of message b (without braces), first
// telling whether no member was written yet.
func writeMessage(dst *bytes.Buffer, b []byte, m *message, proj Projection, first *bool) error {
	// The occurrences of a list's field are adjacent (as Kubernetes'
	// generated code writes them); they are gathered until another field
	// starts.
	var runBuf [8]wireValue
	run := runBuf[:0]
	var runField *field
	var runNum uint64
	var runProj Projection
	seen := uint64(0) // lists already written, by field number < 64
	r := reader{b: b}
	for {
		num, w, ok := r.next()
		if runField != nil && (!ok || num != runNum) {
			member(dst, runField.name, first)
			if err := writeRepeated(dst, runField, run, runProj); err != nil {
				return err
			}
			runField, run = nil, run[:0]
		}
		if !ok {
			return r.err
		}
		f := m.field(num)
		if f == nil {
			continue
		}
		sub, keep := proj, true
		if f.name != "" && proj != nil {
			sub, keep = proj[f.name]
		}
		if !keep {
			continue
		}
		if f.repeated || f.mapVal != nil {
			if runField == nil {
				if num < 64 {
					if seen&(1<<num) != 0 {
						return fmt.Errorf("pbjson: the items of field %d are not adjacent", num)
					}
					seen |= 1 << num
				}
				runField, runNum, runProj = f, num, sub
			}
			run = append(run, w)
			continue
		}
		if f.name == "" {
			// Inlined: its members are the parent's.
			if w.wt != 2 {
				return errWireType
			}
			if err := writeMessage(dst, w.val, f.msg, sub, first); err != nil {
				return err
			}
			continue
		}
		if f.omitEmpty && !f.pointer && isEmpty(f, w) {
			continue
		}
		member(dst, f.name, first)
		if err := writeValue(dst, f, w, sub); err != nil {
			return err
		}
	}
}

func member(dst *bytes.Buffer, name string, first *bool) {
	if !*first {
		dst.WriteByte(',')
	}
	*first = false
	dst.WriteByte('"')
	dst.WriteString(name) // Go field names and json tags need no escaping
	dst.WriteString(`":`)
}

// isEmpty reports a value encoding/json's omitempty leaves out.
func isEmpty(f *field, w wireValue) bool {
	switch f.kind {
	case kString, kBytes:
		return len(w.val) == 0
	case kInt, kUint, kBool, kFloat:
		return w.wt != 2 && w.v == 0
	}
	return false // structs are never left out
}

// writeRepeated writes a list or a map from its occurrences.
func writeRepeated(dst *bytes.Buffer, f *field, run []wireValue, proj Projection) error {
	if f.mapVal != nil {
		return writeMap(dst, f, run)
	}
	dst.WriteByte('[')
	n := 0
	for _, w := range run {
		if w.wt == 2 && isNumeric(f.elem.kind) {
			// Packed numbers: several in one length-delimited value.
			p := reader{b: w.val}
			for {
				x, ok := p.packed(f.elem)
				if !ok {
					break
				}
				if n > 0 {
					dst.WriteByte(',')
				}
				n++
				if err := writeValue(dst, f.elem, x, nil); err != nil {
					return err
				}
			}
			if p.err != nil {
				return p.err
			}
			continue
		}
		if n > 0 {
			dst.WriteByte(',')
		}
		n++
		if err := writeValue(dst, f.elem, w, proj); err != nil {
			return err
		}
	}
	dst.WriteByte(']')
	return nil
}

func isNumeric(k kind) bool { return k == kInt || k == kUint || k == kBool || k == kFloat }

// packed reads one number of a packed list of elem.
func (r *reader) packed(elem *field) (wireValue, bool) {
	if r.i >= len(r.b) || r.err != nil {
		return wireValue{}, false
	}
	b := r.b[r.i:]
	switch {
	case elem.kind == kFloat && elem.bits == 64:
		if len(b) < 8 {
			r.err = errTruncated
			return wireValue{}, false
		}
		r.i += 8
		return wireValue{wt: 1, v: binary.LittleEndian.Uint64(b)}, true
	case elem.kind == kFloat:
		if len(b) < 4 {
			r.err = errTruncated
			return wireValue{}, false
		}
		r.i += 4
		return wireValue{wt: 5, v: uint64(binary.LittleEndian.Uint32(b))}, true
	}
	x, n := binary.Uvarint(b)
	if n <= 0 {
		r.err = errTruncated
		return wireValue{}, false
	}
	r.i += n
	return wireValue{wt: 0, v: x}, true
}

type mapEntry struct {
	key []byte
	val wireValue
	has bool
}

// writeMap writes map entries (messages of key 1 and value 2) as a JSON
// object with sorted keys, as encoding/json does.
func writeMap(dst *bytes.Buffer, f *field, run []wireValue) error {
	var buf [16]mapEntry
	entries := buf[:0]
	for _, w := range run {
		if w.wt != 2 {
			return errWireType
		}
		k, v, has, err := pair(w.val)
		if err != nil {
			return err
		}
		e := mapEntry{key: k.val, val: v, has: has}
		entries = append(entries, e)
	}
	if !slices.IsSortedFunc(entries, cmpEntry) {
		slices.SortStableFunc(entries, cmpEntry)
	}
	dst.WriteByte('{')
	for i, e := range entries {
		if i > 0 {
			if bytes.Equal(e.key, entries[i-1].key) {
				continue // the last would win in Go's map; keys are unique in practice
			}
			dst.WriteByte(',')
		}
		writeString(dst, e.key)
		dst.WriteByte(':')
		if !e.has {
			writeZero(dst, f.mapVal)
			continue
		}
		if err := writeValue(dst, f.mapVal, e.val, nil); err != nil {
			return err
		}
	}
	dst.WriteByte('}')
	return nil
}

func cmpEntry(a, b mapEntry) int { return bytes.Compare(a.key, b.key) }

// writeZero writes the zero value of a map's value absent from its entry.
func writeZero(dst *bytes.Buffer, f *field) {
	switch {
	case f.pointer:
		dst.WriteString("null")
	case f.kind == kString || f.kind == kBytes:
		dst.WriteString(`""`)
	case f.kind == kInt || f.kind == kUint || f.kind == kFloat || f.kind == kIntOrString:
		dst.WriteByte('0')
	case f.kind == kBool:
		dst.WriteString("false")
	case f.kind == kQuantity:
		dst.WriteString(`"0"`)
	case f.kind == kMessage:
		dst.WriteString("{}")
	default:
		dst.WriteString("null")
	}
}

// writeValue writes one value of field f.
func writeValue(dst *bytes.Buffer, f *field, w wireValue, proj Projection) error {
	switch f.kind {
	case kString:
		if w.wt != 2 {
			return errWireType
		}
		writeString(dst, w.val)
	case kBytes:
		if w.wt != 2 {
			return errWireType
		}
		n := base64.StdEncoding.EncodedLen(len(w.val))
		dst.Grow(n + 2)
		out := dst.AvailableBuffer()[:n+2]
		out[0], out[n+1] = '"', '"'
		base64.StdEncoding.Encode(out[1:], w.val)
		dst.Write(out)
	case kInt:
		if w.wt != 0 {
			return errWireType
		}
		x := int64(w.v)
		if f.bits < 64 {
			x = int64(int32(w.v))
		}
		dst.Write(strconv.AppendInt(dst.AvailableBuffer(), x, 10))
	case kUint:
		if w.wt != 0 {
			return errWireType
		}
		dst.Write(strconv.AppendUint(dst.AvailableBuffer(), w.v, 10))
	case kBool:
		if w.wt != 0 {
			return errWireType
		}
		if w.v != 0 {
			dst.WriteString("true")
		} else {
			dst.WriteString("false")
		}
	case kFloat:
		var x float64
		switch {
		case w.wt == 1 && f.bits == 64:
			x = math.Float64frombits(w.v)
		case w.wt == 5 && f.bits == 32:
			x = float64(math.Float32frombits(uint32(w.v)))
		default:
			return errWireType
		}
		var b []byte
		var err error
		if f.bits == 32 {
			b, err = json.Marshal(float32(x))
		} else {
			b, err = json.Marshal(x)
		}
		if err != nil {
			return fmt.Errorf("pbjson: %w", err)
		}
		dst.Write(b)
	case kMessage:
		if w.wt != 2 {
			return errWireType
		}
		dst.WriteByte('{')
		first := true
		if err := writeMessage(dst, w.val, f.msg, proj, &first); err != nil {
			return err
		}
		dst.WriteByte('}')
	default:
		if w.wt != 2 {
			return errWireType
		}
		return writeSpecial(dst, f.kind, w.val)
	}
	return nil
}

// zeroUnix is time.Time{}'s Unix seconds.
var zeroUnix = time.Time{}.Unix()

// writeSpecial writes the types with their own JSON form from their
// messages, as their MarshalJSON would.
func writeSpecial(dst *bytes.Buffer, k kind, b []byte) error {
	var v1, v2 uint64
	var s1, s3 []byte
	has1 := false
	r := reader{b: b}
	for num, w, ok := r.next(); ok; num, w, ok = r.next() {
		switch num {
		case 1:
			v1, s1, has1 = w.v, w.val, true
		case 2:
			v2 = w.v
		case 3:
			s3 = w.val
		}
	}
	if r.err != nil {
		return r.err
	}
	switch k {
	case kTime, kMicroTime:
		// Timestamp{1 seconds, 2 nanos}; an empty message is the zero
		// time, written as null. Time keeps seconds, MicroTime micros.
		var t time.Time
		if len(b) > 0 {
			if k == kTime {
				t = time.Unix(int64(v1), 0)
			} else {
				t = time.Unix(int64(v1), int64(time.Duration(int32(v2)).Truncate(time.Microsecond)))
			}
		}
		if t.IsZero() {
			dst.WriteString("null")
			return nil
		}
		layout := time.RFC3339
		if k == kMicroTime {
			layout = "2006-01-02T15:04:05.000000Z07:00"
		}
		dst.WriteByte('"')
		dst.Write(t.UTC().AppendFormat(dst.AvailableBuffer(), layout))
		dst.WriteByte('"')
	case kQuantity:
		if !has1 || len(s1) == 0 {
			dst.WriteString(`"0"`)
			return nil
		}
		writeString(dst, s1)
	case kDuration:
		dst.WriteByte('"')
		dst.WriteString(time.Duration(int64(v1)).String())
		dst.WriteByte('"')
	case kIntOrString:
		// IntOrString{1 type, 2 intVal, 3 strVal}: type 0 is an int.
		if v1 == 0 {
			dst.Write(strconv.AppendInt(dst.AvailableBuffer(), int64(int32(v2)), 10))
		} else {
			writeString(dst, s3)
		}
	case kRaw:
		// Raw JSON, written as it is when it is JSON (encoding/json would
		// refuse anything else).
		if !has1 || !json.Valid(s1) {
			dst.WriteString("null")
			return nil
		}
		dst.Write(bytes.TrimSpace(s1))
	}
	return nil
}

// writeString writes s as a JSON string as encoding/json would (HTML
// characters escaped, invalid UTF-8 replaced).
func writeString(dst *bytes.Buffer, s []byte) {
	for _, c := range s {
		if c < 0x20 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' || c >= 0x80 {
			b, _ := json.Marshal(string(s))
			dst.Write(b)
			return
		}
	}
	dst.WriteByte('"')
	dst.Write(s)
	dst.WriteByte('"')
}
