package bodylimits

import (
	"bytes"
	"encoding/binary"
)

// protobufMagic starts a Kubernetes protobuf body (then a runtime.Unknown).
var protobufMagic = []byte("k8s\x00")

// maxDepth bounds how deep checkProtobuf looks into nested messages.
const maxDepth = 32

// checkProtobuf counts, in each message of a Kubernetes protobuf body,
// the occurrences of each length-delimited field: a map's entries and a
// list's items are such repeated fields. A length-delimited field is a
// string, bytes or a message; whatever parses as a message is looked into.
func checkProtobuf(body []byte) error {
	if !bytes.HasPrefix(body, protobufMagic) {
		return nil
	}
	_, err := scanMessage(body[len(protobufMagic):], 0)
	return err
}

// scanMessage reports whether b is a well-formed message, and an error
// when it or a message inside it repeats a field more than MaxEntries
// times.
func scanMessage(b []byte, depth int) (bool, error) {
	counts := map[uint64]int{}
	for len(b) > 0 {
		tag, n := binary.Uvarint(b)
		if n <= 0 || tag>>3 == 0 {
			return false, nil
		}
		b = b[n:]
		switch tag & 7 {
		case 0: // varint
			if _, n = binary.Uvarint(b); n <= 0 {
				return false, nil
			}
			b = b[n:]
		case 1: // fixed64
			if len(b) < 8 {
				return false, nil
			}
			b = b[8:]
		case 5: // fixed32
			if len(b) < 4 {
				return false, nil
			}
			b = b[4:]
		case 2: // length-delimited
			l, n := binary.Uvarint(b)
			if n <= 0 || l > uint64(len(b)-n) {
				return false, nil
			}
			field := b[n : n+int(l)]
			b = b[n+int(l):]
			if counts[tag>>3]++; counts[tag>>3] > MaxEntries {
				return true, tooMany("a map or list")
			}
			if depth < maxDepth && len(field) > 0 {
				if _, err := scanMessage(field, depth+1); err != nil {
					return true, err
				}
			}
		default:
			return false, nil
		}
	}
	return true, nil
}
