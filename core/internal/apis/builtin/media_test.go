package builtin

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
)

func TestHasProtobuf(t *testing.T) {
	want := map[string]bool{
		"": true, "rbac.authorization.k8s.io": true, "coordination.k8s.io": true,
		"authorization.k8s.io": true, "authentication.k8s.io": true, "certificates.k8s.io": true,
		"admissionregistration.k8s.io": true, "events.k8s.io": true,
		"tenancy.kcp.io": false, "core.kcp.io": false, "apis.kcp.io": false,
	}
	for _, gv := range GroupVersions {
		w, ok := want[gv.Group]
		if !ok {
			t.Errorf("group %q is served but not in this test", gv.Group)
			continue
		}
		if got := HasProtobuf(Scheme, gv.Group); got != w {
			t.Errorf("HasProtobuf(%q) = %v, want %v", gv.Group, got, w)
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
	if got := media(CodecsFor("", Codecs, nil)); !strings.Contains(got, runtime.ContentTypeProtobuf) {
		t.Errorf("core/v1 media types %s lack protobuf", got)
	}
	got := media(CodecsFor("tenancy.kcp.io", Codecs, nil))
	if strings.Contains(got, "protobuf") || !strings.Contains(got, runtime.ContentTypeJSON) {
		t.Errorf("tenancy.kcp.io media types = %s, want JSON and no protobuf", got)
	}
}
