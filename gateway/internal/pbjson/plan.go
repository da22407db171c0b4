package pbjson

import (
	"bytes"
	"fmt"
	"strconv"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Spec is one member of an object as a GraphQL selection writes it: the
// executor compiles its selection into Specs, and a Plan writes the
// answer straight from the core's protobuf, in the selection's order,
// without JSON in between.
type Spec struct {
	// Key is the member's name in the answer (a GraphQL alias).
	Key string
	// Const, when not nil, is written as it is (__typename; an item's
	// kind and apiVersion, which protobuf lists do not carry).
	Const []byte
	// Member is the JSON member read (null when the object lacks it).
	Member string
	// List says the GraphQL type is a list.
	List bool
	// Sub is the selection of an object (or of each object of a list);
	// nil for a leaf, written as the core's JSON would hold it.
	Sub []Spec
	// Coerce adjusts a leaf to its GraphQL scalar.
	Coerce Coercion
}

// Coercion is how a leaf's JSON is adjusted to its GraphQL scalar, as the
// executor does for JSON answers.
type Coercion uint8

const (
	AsIs Coercion = iota
	// ToString quotes a leaf that is not a JSON string.
	ToString
	// ToInt truncates a number with a fraction or an exponent.
	ToInt
)

// Plan writes objects of one kind by a compiled selection.
type Plan struct {
	msg    *message
	fields []planField
	// slotOf maps a field number to its slot in a scan (-1: not read).
	slotOf []int16
	slots  int
}

type planField struct {
	key    []byte // "key":
	konst  []byte
	ref    fieldRef
	found  bool
	slot   int16 // of ref.num, or of ref.via when inlined
	list   bool
	coerce Coercion
	sub    *Plan
}

// Compile compiles specs for the items of list kind gvk ("ConfigMapList"):
// an error when a member's wire form does not match its GraphQL type (the
// caller then writes from JSON).
func Compile(gvk schema.GroupVersionKind, specs []Spec) (*Plan, error) {
	list := layoutOf(gvk)
	if list == nil {
		return nil, ErrUnsupported
	}
	items, ok := list.byName["items"]
	if !ok || !items.f.repeated || items.f.elem.kind != kMessage {
		return nil, fmt.Errorf("pbjson: %v has no items", gvk)
	}
	return compile(items.f.elem.msg, specs)
}

func compile(m *message, specs []Spec) (*Plan, error) {
	p := &Plan{msg: m}
	slot := func(num uint64) int16 {
		for uint64(len(p.slotOf)) <= num {
			p.slotOf = append(p.slotOf, -1)
		}
		if p.slotOf[num] < 0 {
			p.slotOf[num] = int16(p.slots)
			p.slots++
		}
		return p.slotOf[num]
	}
	for _, s := range specs {
		pf := planField{key: append(quote(nil, s.Key), ':'), konst: s.Const, list: s.List, coerce: s.Coerce}
		if s.Const == nil {
			pf.ref, pf.found = m.byName[s.Member]
		}
		if pf.found {
			f := pf.ref.f
			switch {
			case f.repeated:
				if !s.List || s.Sub != nil && f.elem.kind != kMessage {
					return nil, fmt.Errorf("pbjson: member %s is a list", s.Member)
				}
			case s.List:
				return nil, fmt.Errorf("pbjson: member %s is not a list", s.Member)
			case s.Sub != nil && (f.kind != kMessage || f.mapVal != nil):
				return nil, fmt.Errorf("pbjson: member %s is not an object", s.Member)
			}
			if s.Sub != nil {
				msg := f.msg
				if f.repeated {
					msg = f.elem.msg
				}
				sub, err := compile(msg, s.Sub)
				if err != nil {
					return nil, err
				}
				pf.sub = sub
			}
			if pf.ref.via != 0 {
				pf.slot = slot(pf.ref.via)
			} else {
				pf.slot = slot(pf.ref.num)
			}
		}
		p.fields = append(p.fields, pf)
	}
	return p, nil
}

// quote appends s as a JSON string.
func quote(dst []byte, s string) []byte {
	var b bytes.Buffer
	writeString(&b, []byte(s))
	return append(dst, b.Bytes()...)
}

// WriteItems writes the list's items (from Items) as a JSON array.
func (p *Plan) WriteItems(dst *bytes.Buffer, items [][]byte) error {
	sc := &scratch{}
	dst.WriteByte('[')
	for i, it := range items {
		if i > 0 {
			dst.WriteByte(',')
		}
		if err := p.writeObject(dst, it, sc); err != nil {
			return err
		}
	}
	dst.WriteByte(']')
	return nil
}

// span is where a field's occurrences lie in its message: the first's
// value (enough for a singular field) and the range from the first to
// the end of the last (re-read for a list).
type span struct {
	w          wireValue
	start, end int
	set        bool
}

// add records an occurrence w of the field at [start, end).
func (s *span) add(w wireValue, start, end int, repeated bool) {
	if !s.set {
		*s = span{w: w, start: start, set: true}
	} else if !repeated {
		s.w = w // the last of a repeated singular field wins
	}
	s.end = end
}

// scratch is reused between the objects of one write.
type scratch struct {
	spans []span
	run   []wireValue // a map's entries
	leaf  bytes.Buffer
}

func (sc *scratch) take(n int) []span {
	if cap(sc.spans)-len(sc.spans) < n {
		// The enclosing objects keep their spans in the old array; the
		// length stays, so that give matches take.
		sc.spans = make([]span, len(sc.spans), max(64, 2*cap(sc.spans), len(sc.spans)+n))
	}
	s := sc.spans[len(sc.spans) : len(sc.spans)+n]
	clear(s)
	sc.spans = sc.spans[:len(sc.spans)+n]
	return s
}

func (sc *scratch) give(n int) { sc.spans = sc.spans[:len(sc.spans)-n] }

// writeObject writes message b as the plan's object.
func (p *Plan) writeObject(dst *bytes.Buffer, b []byte, sc *scratch) error {
	spans := sc.take(p.slots)
	defer sc.give(p.slots)
	r := reader{b: b}
	for {
		start := r.i
		num, w, ok := r.next()
		if !ok {
			break
		}
		if num >= uint64(len(p.slotOf)) || p.slotOf[num] < 0 {
			continue
		}
		spans[p.slotOf[num]].add(w, start, r.i, p.msg.fields[num].repeated)
	}
	if r.err != nil {
		return r.err
	}
	dst.WriteByte('{')
	for i := range p.fields {
		pf := &p.fields[i]
		if i > 0 {
			dst.WriteByte(',')
		}
		dst.Write(pf.key)
		switch {
		case pf.konst != nil:
			dst.Write(pf.konst)
			continue
		case !pf.found:
			dst.WriteString("null")
			continue
		}
		s := spans[pf.slot]
		if !s.set {
			dst.WriteString("null")
			continue
		}
		src := b
		if pf.ref.via != 0 {
			// Inlined: find the member in the inlined message.
			src = s.w.val
			inner, err := find(src, pf.ref.num, pf.ref.f.repeated)
			if err != nil {
				return err
			}
			if !inner.set {
				dst.WriteString("null")
				continue
			}
			s = inner
		}
		if err := p.writeMember(dst, pf, src, s, sc); err != nil {
			return err
		}
	}
	dst.WriteByte('}')
	return nil
}

// find locates field num in message b.
func find(b []byte, num uint64, repeated bool) (span, error) {
	var s span
	r := reader{b: b}
	for {
		start := r.i
		n, w, ok := r.next()
		if !ok {
			break
		}
		if n != num {
			continue
		}
		s.add(w, start, r.i, repeated)
	}
	return s, r.err
}

// writeMember writes the value of one member found at s in message src.
func (p *Plan) writeMember(dst *bytes.Buffer, pf *planField, src []byte, s span, sc *scratch) error {
	f := pf.ref.f
	if f.repeated {
		dst.WriteByte('[')
		r := reader{b: src[s.start:s.end]}
		n := 0
		for {
			num, w, ok := r.next()
			if !ok {
				break
			}
			if num != pf.ref.num {
				continue
			}
			if w.wt == 2 && isNumeric(f.elem.kind) {
				// Packed: leave it to the JSON writer.
				sc.leaf.Reset()
				if err := writeRepeated(&sc.leaf, f, []wireValue{w}, nil); err != nil {
					return err
				}
				inner := bytes.TrimSuffix(bytes.TrimPrefix(sc.leaf.Bytes(), []byte("[")), []byte("]"))
				if len(inner) > 0 {
					if n > 0 {
						dst.WriteByte(',')
					}
					n++
					dst.Write(inner)
				}
				continue
			}
			if n > 0 {
				dst.WriteByte(',')
			}
			n++
			if err := p.writeOne(dst, pf, f.elem, w, sc); err != nil {
				return err
			}
		}
		if r.err != nil {
			return r.err
		}
		dst.WriteByte(']')
		return nil
	}
	if f.mapVal != nil {
		// A map is a leaf: all its entries, as JSON.
		run := sc.run[:0]
		r := reader{b: src[s.start:s.end]}
		for num, w, ok := r.next(); ok; num, w, ok = r.next() {
			if num == pf.ref.num {
				run = append(run, w)
			}
		}
		sc.run = run[:0]
		if r.err != nil {
			return r.err
		}
		sc.leaf.Reset()
		if err := writeMap(&sc.leaf, f, run); err != nil {
			return err
		}
		coerce(dst, sc.leaf.Bytes(), pf.coerce)
		return nil
	}
	if f.omitEmpty && !f.pointer && isEmpty(f, s.w) {
		dst.WriteString("null") // left out of the JSON
		return nil
	}
	return p.writeOne(dst, pf, f, s.w, sc)
}

// writeOne writes one value (a singular member or an item of a list).
func (p *Plan) writeOne(dst *bytes.Buffer, pf *planField, f *field, w wireValue, sc *scratch) error {
	if pf.sub != nil {
		if w.wt != 2 {
			return errWireType
		}
		return pf.sub.writeObject(dst, w.val, sc)
	}
	if f.kind == kString && w.wt == 2 {
		writeString(dst, w.val) // a string needs no coercion
		return nil
	}
	sc.leaf.Reset()
	if err := writeValue(&sc.leaf, f, w, nil); err != nil {
		return err
	}
	coerce(dst, sc.leaf.Bytes(), pf.coerce)
	return nil
}

// coerce writes leaf JSON raw as its GraphQL scalar, as the executor
// writes a leaf of a JSON answer.
func coerce(dst *bytes.Buffer, raw []byte, c Coercion) {
	switch {
	case len(raw) == 0 || string(raw) == "null":
		dst.WriteString("null")
	case c == ToString && raw[0] != '"':
		writeString(dst, raw)
	case c == ToInt && bytes.ContainsAny(raw, ".eE"):
		f, _ := strconv.ParseFloat(string(raw), 64)
		dst.WriteString(strconv.FormatInt(int64(f), 10))
	default:
		dst.Write(raw)
	}
}

// List is a protobuf list answer: its metadata and its items' messages.
type List struct {
	Kind               schema.GroupVersionKind
	Continue           string
	ResourceVersion    string
	RemainingItemCount *int64
	Items              [][]byte
}

// ParseList reads a protobuf list answer b (Items point into b).
func ParseList(b []byte) (*List, error) {
	gvk, raw, err := unwrap(b)
	if err != nil {
		return nil, err
	}
	m := layoutOf(gvk)
	if m == nil {
		return nil, ErrUnsupported
	}
	md, okMD := m.byName["metadata"]
	items, okItems := m.byName["items"]
	if !okMD || !okItems || md.via != 0 || items.via != 0 || md.f.msg == nil {
		return nil, fmt.Errorf("pbjson: %v is not a list", gvk)
	}
	lm := md.f.msg.byName
	rv, cont, remaining := lm["resourceVersion"].num, lm["continue"].num, lm["remainingItemCount"].num
	out := &List{Kind: gvk, Items: make([][]byte, 0, 64)}
	r := reader{b: raw}
	for num, w, ok := r.next(); ok; num, w, ok = r.next() {
		switch num {
		case items.num:
			out.Items = append(out.Items, w.val)
		case md.num:
			meta := reader{b: w.val}
			for n, v, ok := meta.next(); ok; n, v, ok = meta.next() {
				switch n {
				case rv:
					out.ResourceVersion = string(v.val)
				case cont:
					out.Continue = string(v.val)
				case remaining:
					c := int64(v.v)
					out.RemainingItemCount = &c
				}
			}
			if meta.err != nil {
				return nil, meta.err
			}
		}
	}
	return out, r.err
}

// ItemJSON writes item (an item of a list of kind listGVK) as the core's
// JSON would hold it, without kind and apiVersion.
func ItemJSON(dst *bytes.Buffer, listGVK schema.GroupVersionKind, item []byte) error {
	list := layoutOf(listGVK)
	if list == nil {
		return ErrUnsupported
	}
	items, ok := list.byName["items"]
	if !ok || !items.f.repeated || items.f.elem.kind != kMessage {
		return fmt.Errorf("pbjson: %v has no items", listGVK)
	}
	return writeValue(dst, items.f.elem, wireValue{wt: 2, val: item}, nil)
}
