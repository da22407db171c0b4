package builtin

import (
	"reflect"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/meshplane/meshplane/core/internal/apis/builtin/listcache"
)

// protoMarshaler is what the protobuf serializer needs of an object.
type protoMarshaler interface {
	Marshal() ([]byte, error)
}

// HasProtobuf tells whether the group's kinds can be encoded as protobuf.
// kcp's types (tenancy.kcp.io, core.kcp.io, apis.kcp.io) have no generated
// protobuf code; kcp serves them from CRDs, as JSON only. A group's kinds
// come from one generator, so one kind of its preferred version decides.
func HasProtobuf(s *runtime.Scheme, group string) bool {
	for _, gv := range s.PrioritizedVersionsForGroup(group) {
		types := s.KnownTypes(gv)
		var kinds []string
		for kind := range types {
			if !isMetaKind(kind) {
				kinds = append(kinds, kind)
			}
		}
		if len(kinds) == 0 {
			continue
		}
		// A list kind if there is one (authorization.k8s.io has none).
		slices.SortFunc(kinds, func(a, b string) int {
			if la, lb := strings.HasSuffix(a, "List"), strings.HasSuffix(b, "List"); la != lb {
				if la {
					return -1
				}
				return 1
			}
			return strings.Compare(a, b)
		})
		return reflect.PointerTo(types[kinds[0]]).Implements(reflect.TypeFor[protoMarshaler]())
	}
	return false
}

func isMetaKind(kind string) bool {
	_, ok := metaKinds[kind]
	return ok
}

// CodecsFor is the negotiated serializer the group is served with: codecs
// (the generic server's, with its feature-gated options), without protobuf
// for a group whose kinds cannot be encoded as protobuf.
// As for a custom resource in kube-apiserver, a client that accepts
// "application/vnd.kubernetes.protobuf,application/json" then gets JSON,
// and one that accepts only protobuf gets 406 Not Acceptable.
// The Kubernetes groups' JSON lists take their items' bytes from lists, a
// cache shared by all groups (nil: none). kcp's kinds are left out: they
// are listed rarely, and some of their storages fill fields on read.
func CodecsFor(group string, codecs runtime.NegotiatedSerializer, lists *listcache.Cache) runtime.NegotiatedSerializer {
	if !HasProtobuf(Scheme, group) {
		return withoutProtobuf{NegotiatedSerializer: codecs}
	}
	if lists != nil {
		return listcache.Wrap(codecs, lists)
	}
	return codecs
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
