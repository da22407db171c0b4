package exec

import (
	"encoding/json"
)

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
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return -1
}

// skipValue returns the index after the value starting at b[i].
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
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

// splitObject decodes a JSON object one level deep.
func splitObject(b []byte) (rawObject, bool) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return nil, false
	}
	out := rawObject{}
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
		for _, c := range key {
			if c == '\\' {
				// An escaped key: let encoding/json do it.
				var ro rawObject
				if json.Unmarshal(b, &ro) != nil {
					return nil, false
				}
				return ro, true
			}
		}
		i = skipSpace(b, end)
		if i >= len(b) || b[i] != ':' {
			return nil, false
		}
		i = skipSpace(b, i+1)
		vend := skipValue(b, i)
		if vend < 0 {
			return nil, false
		}
		out[string(key)] = json.RawMessage(b[i:vend])
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

// splitArray decodes a JSON array one level deep.
func splitArray(b []byte) ([]json.RawMessage, bool) {
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
		end := skipValue(b, i)
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
