package builtin

import (
	"reflect"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
)

// protoMarshaler is what the protobuf serializer needs of an object.
type protoMarshaler interface {
	Marshal() ([]byte, error)
}

// HasProtobuf tells whether every kind of the group can be encoded as
// protobuf. kcp's types (tenancy.kcp.io, core.kcp.io, apis.kcp.io) have no
// generated protobuf code; kcp serves them from CRDs, as JSON only.
func HasProtobuf(s *runtime.Scheme, group string) bool {
	for gvk, t := range s.AllKnownTypes() {
		if gvk.Group != group || gvk.Version == runtime.APIVersionInternal {
			continue
		}
		if !reflect.PointerTo(t).Implements(reflect.TypeFor[protoMarshaler]()) {
			return false
		}
	}
	return true
}

// CodecsFor is the negotiated serializer the group is served with: codecs
// (the generic server's, with its feature-gated options), without protobuf
// for a group whose kinds cannot be encoded as protobuf.
// As for a custom resource in kube-apiserver, a client that accepts
// "application/vnd.kubernetes.protobuf,application/json" then gets JSON,
// and one that accepts only protobuf gets 406 Not Acceptable.
func CodecsFor(group string, codecs runtime.NegotiatedSerializer) runtime.NegotiatedSerializer {
	if HasProtobuf(Scheme, group) {
		return codecs
	}
	return withoutProtobuf{NegotiatedSerializer: codecs}
}

// withoutProtobuf offers a negotiated serializer's media types but protobuf.
type withoutProtobuf struct {
	runtime.NegotiatedSerializer
}

func (w withoutProtobuf) SupportedMediaTypes() []runtime.SerializerInfo {
	var out []runtime.SerializerInfo
	for _, info := range w.NegotiatedSerializer.SupportedMediaTypes() {
		if !strings.Contains(info.MediaType, "protobuf") {
			out = append(out, info)
		}
	}
	return out
}
