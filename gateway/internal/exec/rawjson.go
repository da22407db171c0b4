package exec

import (
	"bytes"
	"encoding/json"
	"slices"
	"unsafe"
)

// rawObject is a JSON object decoded one level deep: its members in
// order, the values still JSON. Objects have few members, so a linear
// search beats a map and allocates nothing per member.
type rawObject []rawField

type rawField struct {
	key string
	val json.RawMessage
}

// get returns the member key (nil when absent; the first when repeated).
func (o rawObject) get(key string) json.RawMessage {
	for i := range o {
		if o[i].key == key {
			return o[i].val
		}
	}
	return nil
}

// ref returns a pointer to the member key's value (nil when absent).
func (o rawObject) ref(key string) *json.RawMessage {
	for i := range o {
		if o[i].key == key {
			return &o[i].val
		}
	}
	return nil
}

// MarshalJSON writes the object back.
func (o rawObject) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, f := range o {
		if i > 0 {
			buf.WriteByte(',')
		}
		k, _ := json.Marshal(f.key)
		buf.Write(k)
		buf.WriteByte(':')
		buf.Write(f.val)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// The splitters below cut already validated JSON (a response of the core,
// validated once when the list was decoded) one level deep without
// validating it again, which json.Unmarshal would do at every level.

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string starting at b[i] == '"'.
func skipString(b []byte, i int) int {
	i++
	for {
		j := bytes.IndexByte(b[i:], '"')
		if j < 0 {
			return -1
		}
		q := i + j
		// The quote ends the string unless an odd number of backslashes
		// escapes it.
		n := 0
		for p := q - 1; p >= i && b[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return q + 1
		}
		i = q + 1
	}
}

// jsonIndex is where every object and array of one JSON document (a
// core's answer) ends, found in one pass. Without it each level of
// splitting scans the levels below again: a list's items were read four
// times over before the selection reached their fields.
type jsonIndex struct {
	base  []byte
	opens []int32 // offsets of '{' and '[', ascending
	ends  []int32 // offsets after their matching closes
}

// indexJSON indexes b (nil when b is not well-formed enough to index).
func indexJSON(b []byte) *jsonIndex {
	if len(b) > 1<<31-1 {
		return nil
	}
	x := &jsonIndex{base: b, opens: make([]int32, 0, 64), ends: make([]int32, 0, 64)}
	stack := make([]int32, 0, 16) // positions in opens
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '"':
			for i++; i < len(b) && b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
			if i >= len(b) {
				return nil
			}
		case '{', '[':
			stack = append(stack, int32(len(x.opens)))
			x.opens = append(x.opens, int32(i))
			x.ends = append(x.ends, -1)
		case '}', ']':
			if len(stack) == 0 {
				return nil
			}
			x.ends[stack[len(stack)-1]] = int32(i + 1)
			stack = stack[:len(stack)-1]
		}
	}
	if len(stack) != 0 {
		return nil
	}
	return x
}

// containerEnd returns the index in b after the object or array that
// starts at b[i], if b lies within the indexed document.
func (x *jsonIndex) containerEnd(b []byte, i int) (int, bool) {
	if x == nil || len(b) == 0 || len(x.base) == 0 {
		return 0, false
	}
	off := int(uintptr(unsafe.Pointer(unsafe.SliceData(b))) - uintptr(unsafe.Pointer(unsafe.SliceData(x.base))))
	if off < 0 || off+len(b) > len(x.base) {
		return 0, false
	}
	pos := int32(off + i)
	k, found := slices.BinarySearch(x.opens, pos)
	if !found || x.ends[k] < 0 {
		return 0, false
	}
	return int(x.ends[k]) - off, true
}

// contains reports whether b lies within the indexed document.
func (x *jsonIndex) contains(b []byte) bool {
	if x == nil || len(b) == 0 || len(x.base) == 0 {
		return false
	}
	off := int(uintptr(unsafe.Pointer(unsafe.SliceData(b))) - uintptr(unsafe.Pointer(unsafe.SliceData(x.base))))
	return off >= 0 && off+len(b) <= len(x.base)
}

// skipValue returns the index after the value starting at b[i] (x, when
// not nil, finds the ends of objects and arrays).
func skipValue(b []byte, i int, x *jsonIndex) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		if end, ok := x.containerEnd(b, i); ok {
			return end
		}
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				i = skipString(b, i) - 1
				if i < 0 {
					return -1
				}
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		return -1
	default:
		for ; i < len(b); i++ {
			switch b[i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return i
			}
		}
		return i
	}
}

// splitObject decodes a JSON object one level deep (x as for skipValue).
func splitObject(b []byte, x *jsonIndex) (rawObject, bool) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return nil, false
	}
	out := make(rawObject, 0, 8)
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return out, true
	}
	for i < len(b) {
		if b[i] != '"' {
			return nil, false
		}
		end := skipString(b, i)
		if end < 0 {
			return nil, false
		}
		key := b[i+1 : end-1]
		var k string
		if bytes.IndexByte(key, '\\') >= 0 {
			var ok bool
			if k, ok = unquote(b[i:end]); !ok {
				return nil, false
			}
		} else if len(key) > 0 {
			// The key shares the bytes of the core's answer, which are
			// never written to after they were read.
			k = unsafe.String(&key[0], len(key))
		}
		i = skipSpace(b, end)
		if i >= len(b) || b[i] != ':' {
			return nil, false
		}
		i = skipSpace(b, i+1)
		vend := skipValue(b, i, x)
		if vend < 0 {
			return nil, false
		}
		out = append(out, rawField{k, json.RawMessage(b[i:vend])})
		i = skipSpace(b, vend)
		if i < len(b) && b[i] == ',' {
			i = skipSpace(b, i+1)
			continue
		}
		if i < len(b) && b[i] == '}' {
			return out, true
		}
		return nil, false
	}
	return nil, false
}

// unquote decodes an escaped JSON string (apart, so that splitObject's
// keys do not escape to the heap).
func unquote(b []byte) (string, bool) {
	var s string
	if json.Unmarshal(b, &s) != nil {
		return "", false
	}
	return s, true
}

// splitArray decodes a JSON array one level deep (x as for skipValue).
func splitArray(b []byte, x *jsonIndex) ([]json.RawMessage, bool) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '[' {
		return nil, false
	}
	var out []json.RawMessage
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return out, true
	}
	for i < len(b) {
		end := skipValue(b, i, x)
		if end < 0 {
			return nil, false
		}
		out = append(out, json.RawMessage(b[i:end]))
		i = skipSpace(b, end)
		if i < len(b) && b[i] == ',' {
			i = skipSpace(b, i+1)
			continue
		}
		if i < len(b) && b[i] == ']' {
			return out, true
		}
		return nil, false
	}
	return nil, false
}
