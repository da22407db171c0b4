package resources

import (
	"fmt"
	"strings"
	"testing"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestMalformedResourceVersion sends resource versions the server never
// handed out ("abc", "-1") on every path that reads one: the object of a
// PUT, of each kind of PATCH and of a server-side apply, a get, list or
// watch at that version, a delete's precondition. Each answers a 4xx
// Status naming resourceVersion, never a 5xx, and the object is unchanged.
func TestMalformedResourceVersion(t *testing.T) {
	s := server(t)
	cluster, k := s.NewCluster(t, "e2e-badrv")
	k.Run(t, "create", "namespace", "team")
	k.Run(t, "create", "configmap", "cfg", "-n", "team", "--from-literal=k=v")
	k.RunStdin(t, `{"apiVersion":"apis.kcp.io/v1alpha1","kind":"APIExport","metadata":{"name":"export"}}`, "create", "-f", "-")
	base := "/clusters/" + cluster
	cm := base + "/api/v1/namespaces/team/configmaps"
	token := s.AdminToken(t)

	type request struct {
		what, method, path, contentType, body string
	}
	var requests []request
	for _, rv := range []string{"abc", "-1"} {
		cmBody := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cfg","namespace":"team","resourceVersion":%q},"data":{"k":"changed"}}`, rv)
		requests = append(requests,
			request{"PUT of a configmap", "PUT", cm + "/cfg", "application/json", cmBody},
			request{"merge PATCH", "PATCH", cm + "/cfg", "application/merge-patch+json", fmt.Sprintf(`{"metadata":{"resourceVersion":%q},"data":{"k":"changed"}}`, rv)},
			request{"strategic merge PATCH", "PATCH", cm + "/cfg", "application/strategic-merge-patch+json", fmt.Sprintf(`{"metadata":{"resourceVersion":%q},"data":{"k":"changed"}}`, rv)},
			request{"JSON PATCH", "PATCH", cm + "/cfg", "application/json-patch+json", fmt.Sprintf(`[{"op":"replace","path":"/metadata/resourceVersion","value":%q},{"op":"replace","path":"/data/k","value":"changed"}]`, rv)},
			request{"server-side apply", "PATCH", cm + "/cfg?fieldManager=e2e&force=true", "application/apply-patch+yaml", cmBody},
			request{"server-side apply creating", "PATCH", cm + "/fresh?fieldManager=e2e", "application/apply-patch+yaml", strings.ReplaceAll(cmBody, `"cfg"`, `"fresh"`)},
			request{"PUT of a namespace", "PUT", base + "/api/v1/namespaces/team", "application/json", fmt.Sprintf(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"team","resourceVersion":%q}}`, rv)},
			request{"PUT of an APIExport", "PUT", base + "/apis/apis.kcp.io/v1alpha1/apiexports/export", "application/json",
				fmt.Sprintf(`{"apiVersion":"apis.kcp.io/v1alpha1","kind":"APIExport","metadata":{"name":"export","resourceVersion":%q}}`, rv)},
			request{"GET at the version", "GET", cm + "/cfg?resourceVersion=" + rv, "", ""},
			request{"GET of an APIExport at the version", "GET", base + "/apis/apis.kcp.io/v1alpha1/apiexports/export?resourceVersion=" + rv, "", ""},
			request{"list at the version", "GET", cm + "?resourceVersion=" + rv, "", ""},
			request{"paged list at the version", "GET", cm + "?limit=1&resourceVersion=" + rv, "", ""},
			request{"exact list at the version", "GET", cm + "?resourceVersionMatch=Exact&resourceVersion=" + rv, "", ""},
			request{"watch from the version", "GET", cm + "?watch=true&timeoutSeconds=1&resourceVersion=" + rv, "", ""},
			request{"wildcard list at the version", "GET", "/clusters/*/api/v1/configmaps?resourceVersion=" + rv, "", ""},
			request{"DELETE with the version as precondition", "DELETE", cm + "/cfg", "application/json",
				fmt.Sprintf(`{"kind":"DeleteOptions","apiVersion":"v1","preconditions":{"resourceVersion":%q}}`, rv)},
		)
	}
	for _, r := range requests {
		var body []byte
		if r.body != "" {
			body = []byte(r.body)
		}
		resp := s.RequestWithType(t, token, r.method, r.path, r.contentType, body)
		if resp.Err != nil || resp.Code < 400 || resp.Code >= 500 {
			t.Errorf("%s with a malformed resourceVersion: want a 4xx Status, got %s", r.what, resp)
			continue
		}
		if st := resp.Status(t); !strings.Contains(st.Message, "resourceVersion") && !strings.Contains(st.Message, "ResourceVersion") {
			t.Errorf("%s: want the Status to name resourceVersion, got %q", r.what, st.Message)
		}
	}
	framework.RequireEqual(t, k.GetConfigMap(t, "team", "cfg").Data["k"], "v", "configmap cfg's data after the malformed writes")
	_, _, err := k.RunErr(t, "get", "configmap", "fresh", "-n", "team")
	if err == nil {
		t.Errorf("configmap fresh exists: the apply with a malformed resourceVersion created it")
	}
}
