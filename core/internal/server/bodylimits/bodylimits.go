// Package bodylimits bounds what one write request may carry before the
// handlers spend CPU on it: kube-apiserver's 3 MiB body limit, and at most
// MaxEntries entries in any one object (map) or list of the body. The
// server-side apply field manager, which every create, update and patch
// runs before admission, inserts a map's keys in random order into a
// sorted set: quadratic, so a ConfigMap with 100,000 labels (2.7 MB, under
// the body limit) held a CPU for over 30 s and its request timed out.
// kube bounds JSON patches to 10,000 operations; the same bound here holds
// that work to a fraction of a second.
package bodylimits

import (
	"bytes"
	"fmt"
	"io"
	"mime"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
	"sigs.k8s.io/yaml"
)

const (
	// MaxBodyBytes is kube-apiserver's limit on a write's body.
	MaxBodyBytes = 3 * 1024 * 1024
	// MaxEntries bounds the members of one object, or the items of one
	// list, in a write's body.
	MaxEntries = 10_000
	// scanFrom is the body size from which bodies are scanned: a smaller
	// one cannot hold enough entries to matter.
	scanFrom = 64 * 1024
)

// WithLimits refuses write requests whose body is over MaxBodyBytes (413)
// or holds an object or list of more than MaxEntries entries (413), and
// passes the others on with their body intact. codecs encode the Status.
func WithLimits(next http.Handler, codecs runtime.NegotiatedSerializer) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody || (r.Method != http.MethodPost && r.Method != http.MethodPut && r.Method != http.MethodPatch) {
			next.ServeHTTP(w, r)
			return
		}
		if r.ContentLength > MaxBodyBytes {
			refuse(w, r, codecs, apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("limit is %d", MaxBodyBytes)))
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, MaxBodyBytes+1))
		if err != nil {
			refuse(w, r, codecs, apierrors.NewBadRequest(fmt.Sprintf("reading the request body: %v", err)))
			return
		}
		if len(body) > MaxBodyBytes {
			refuse(w, r, codecs, apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("limit is %d", MaxBodyBytes)))
			return
		}
		if len(body) >= scanFrom {
			if err := Check(r.Header.Get("Content-Type"), body); err != nil {
				refuse(w, r, codecs, apierrors.NewRequestEntityTooLargeError(err.Error()))
				return
			}
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		next.ServeHTTP(w, r)
	})
}

var schemaGroupVersion = schema.GroupVersion{Version: "v1"}

func refuse(w http.ResponseWriter, r *http.Request, codecs runtime.NegotiatedSerializer, err error) {
	// The connection may still carry the rest of an unread body: close it.
	w.Header().Set("Connection", "close")
	responsewriters.ErrorNegotiated(err, codecs, schemaGroupVersion, w, r)
}

// Check returns an error when body, of contentType, holds an object or
// list of more than MaxEntries entries. Bodies it cannot read are left to
// the handlers.
func Check(contentType string, body []byte) error {
	mediaType, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return nil
	}
	switch mediaType {
	case "application/vnd.kubernetes.protobuf":
		return checkProtobuf(body)
	case "application/yaml", "application/apply-patch+yaml":
		if first := firstNonSpace(body); first == '{' || first == '[' {
			return checkJSON(body)
		}
		js, err := yaml.YAMLToJSON(body)
		if err != nil {
			return nil
		}
		return checkJSON(js)
	}
	return checkJSON(body)
}

func firstNonSpace(b []byte) byte {
	for _, c := range b {
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		}
		return c
	}
	return 0
}

// tooMany is the error for a container over the bound.
func tooMany(what string) error {
	return fmt.Errorf("the request body holds %s with more than %d entries, the limit", what, MaxEntries)
}

// checkJSON counts the entries of each object and list in one pass: an
// object's members are its colons, a list's items its commas plus one.
func checkJSON(b []byte) error {
	type container struct {
		object  bool
		entries int
	}
	var stack []container
	inString, escaped := false, false
	for _, c := range b {
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
			if n := len(stack); n > 0 && !stack[n-1].object && stack[n-1].entries == 0 {
				stack[n-1].entries = 1
			}
		case '{', '[':
			if n := len(stack); n > 0 && !stack[n-1].object && stack[n-1].entries == 0 {
				stack[n-1].entries = 1
			}
			stack = append(stack, container{object: c == '{'})
		case '}', ']':
			if n := len(stack); n > 0 {
				stack = stack[:n-1]
			}
		case ':':
			if n := len(stack); n > 0 && stack[n-1].object {
				if stack[n-1].entries++; stack[n-1].entries > MaxEntries {
					return tooMany("an object")
				}
			}
		case ',':
			if n := len(stack); n > 0 && !stack[n-1].object {
				if stack[n-1].entries++; stack[n-1].entries > MaxEntries {
					return tooMany("a list")
				}
			}
		default:
			// The first item of a list that is a number, true, false or null.
			if n := len(stack); n > 0 && !stack[n-1].object && stack[n-1].entries == 0 && c != ' ' && c != '\t' && c != '\r' && c != '\n' {
				stack[n-1].entries = 1
			}
		}
	}
	return nil
}
