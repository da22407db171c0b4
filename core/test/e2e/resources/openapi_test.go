package resources

import (
	"encoding/json"
	"sync"
	"testing"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestOpenAPIV3FirstRequestsConcurrently: the OpenAPI v3 documents are
// built on their first request; many first requests at once (the index
// builds every group's document concurrently) are all answered and the
// server stays up (they crashed it with concurrent map writes).
func TestOpenAPIV3FirstRequestsConcurrently(t *testing.T) {
	s := framework.StartServer(t)
	token := s.AdminToken(t)
	paths := []string{"", "/api/v1", "/apis/rbac.authorization.k8s.io/v1", "/apis/tenancy.kcp.io/v1alpha1", "/apis/apis.kcp.io/v1alpha2",
		"/apis/core.kcp.io/v1alpha1", "/apis/admissionregistration.k8s.io/v1", "/apis/coordination.k8s.io/v1", "/apis/events.k8s.io/v1"}
	var wg sync.WaitGroup
	codes := make([]int, 4*len(paths))
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i] = s.RequestURL(t, token, "GET", s.ClusterURL("root")+"/openapi/v3"+paths[i%len(paths)], "", nil).Code
		}()
	}
	wg.Wait()
	for i, c := range codes {
		if c != 200 {
			t.Errorf("request of /openapi/v3%s answered %d", paths[i%len(paths)], c)
		}
	}
	r := s.RequestURL(t, token, "GET", s.ClusterURL("root")+"/openapi/v3/api/v1", "", nil)
	framework.RequireCode(t, r, "the core group's OpenAPI v3 document", 200)
	var doc map[string]any
	if err := json.Unmarshal(r.Body, &doc); err != nil {
		t.Fatalf("the core group's OpenAPI v3 document: %v", err)
	}
	if !s.Running() {
		t.Fatalf("the server exited after concurrent first OpenAPI v3 requests")
	}
}
