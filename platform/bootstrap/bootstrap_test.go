package bootstrap

import "testing"

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
