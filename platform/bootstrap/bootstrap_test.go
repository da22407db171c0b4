package bootstrap

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestManifestsParse(t *testing.T) {
	for _, s := range steps {
		objs, err := s.objects()
		if err != nil {
			t.Fatalf("%s: %v", s.path, err)
		}
		if len(objs) == 0 {
			t.Errorf("%s: no objects", s.path)
		}
		for _, o := range objs {
			if o.GetName() == "" || o.GetKind() == "" || o.GetAPIVersion() == "" {
				t.Errorf("%s: object without name, kind or apiVersion: %v", s.path, o.Object)
			}
		}
	}
}

func TestSystemOnlyObjects(t *testing.T) {
	objs, err := SystemOnlyObjects("pmscluster", "orgscluster")
	if err != nil || len(objs) != 4 {
		t.Fatalf("objects %d, %v", len(objs), err)
	}
	exprs := map[string]string{}
	for _, o := range objs {
		vs, _, _ := unstructured.NestedSlice(o.Object, "spec", "validations")
		if len(vs) > 0 {
			exprs[o.GetName()], _ = vs[0].(map[string]any)["expression"].(string)
		}
	}
	if expr := exprs["core.platform-mesh.io-accountinfo-system-only"]; !strings.Contains(expr, "c == 'pmscluster'") || strings.Contains(expr, PlatformMeshSystemClusterVar) {
		t.Fatalf("the operators' cluster is not filled in: %s", expr)
	}
	if expr := exprs["core.platform-mesh.io-account-placement-org"]; !strings.Contains(expr, "== 'orgscluster'") || strings.Contains(expr, OrgsClusterVar) {
		t.Fatalf("root:orgs' cluster is not filled in: %s", expr)
	}
}
