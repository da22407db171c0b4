package builtin

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
)

func TestHasProtobuf(t *testing.T) {
	for group, want := range map[string]bool{
		"": true, "rbac.authorization.k8s.io": true, "coordination.k8s.io": true,
		"tenancy.kcp.io": false, "core.kcp.io": false, "apis.kcp.io": false,
	} {
		if got := HasProtobuf(Scheme, group); got != want {
			t.Errorf("HasProtobuf(%q) = %v, want %v", group, got, want)
		}
	}
}

func TestCodecsForDropsProtobufOnlyForKcpGroups(t *testing.T) {
	media := func(ns runtime.NegotiatedSerializer) string {
		var out []string
		for _, info := range ns.SupportedMediaTypes() {
			out = append(out, info.MediaType)
		}
		return strings.Join(out, ",")
	}
	if got := media(CodecsFor("", Codecs)); !strings.Contains(got, runtime.ContentTypeProtobuf) {
		t.Errorf("core/v1 media types %s lack protobuf", got)
	}
	got := media(CodecsFor("tenancy.kcp.io", Codecs))
	if strings.Contains(got, "protobuf") || !strings.Contains(got, runtime.ContentTypeJSON) {
		t.Errorf("tenancy.kcp.io media types = %s, want JSON and no protobuf", got)
	}
}
