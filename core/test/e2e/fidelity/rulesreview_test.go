package fidelity

import (
	"encoding/json"
	"sort"
	"strings"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestSelfSubjectRulesReviewDefaults checks, as kcp's authorizer e2e does,
// that a user admitted to a workspace (verb access on /) gets exactly
// kcp's default rules from a SelfSubjectRulesReview, complete; that a user
// without access gets none; and that a SubjectAccessReview agrees: a
// ServiceAccount of another workspace does not keep system:kcp:admin.
func TestSelfSubjectRulesReviewDefaults(t *testing.T) {
	t.Parallel()
	s := server(t)
	org := s.CreateOrg(t, "rulesreview")
	ws := s.CreateWorkspaces(t, org.Path, "w1", "w2")
	for _, p := range []string{org.Path, ws[1].Path} {
		s.KubectlFor(p).Run(t, "create", "clusterrolebinding", "carol-access", "--clusterrole=system:kcp:workspace:access", "--user=carol")
	}
	review := func(cluster string) *framework.Response {
		return s.RequestURL(t, s.UserToken(t, "carol"), "POST", s.ClusterURL(cluster)+"/apis/authorization.k8s.io/v1/selfsubjectrulesreviews", "application/json",
			[]byte(`{"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectRulesReview","spec":{"namespace":"default"}}`))
	}
	r := review(ws[0].Path)
	if r.Err == nil && r.Code == 201 {
		t.Errorf("carol reviewed her rules in a workspace she has no access to: %s", r)
	}
	r = review(ws[1].Path)
	framework.RequireCode(t, r, "carol's SelfSubjectRulesReview in "+ws[1].Path, 201)
	var got authorizationv1.SelfSubjectRulesReview
	r.JSON(t, &got)
	var res, nonRes []string
	for _, rule := range got.Status.ResourceRules {
		res = append(res, strings.Join(rule.Verbs, ",")+" "+strings.Join(rule.APIGroups, ",")+" "+strings.Join(rule.Resources, ",")+" "+strings.Join(rule.ResourceNames, ","))
	}
	for _, rule := range got.Status.NonResourceRules {
		nonRes = append(nonRes, strings.Join(rule.Verbs, ",")+" "+strings.Join(rule.NonResourceURLs, ","))
	}
	sort.Strings(res)
	sort.Strings(nonRes)
	framework.RequireEqual(t, strings.Join(res, " | "),
		"create authentication.k8s.io selfsubjectreviews  | create authorization.k8s.io selfsubjectaccessreviews,selfsubjectrulesreviews ",
		"resource rules of carol's SelfSubjectRulesReview")
	framework.RequireEqual(t, strings.Join(nonRes, " | "),
		"access / | get /api,/api/*,/apis,/apis/*,/healthz,/livez,/openapi,/openapi/*,/readyz,/version,/version/ | get /healthz,/livez,/readyz,/version,/version/",
		"non-resource rules of carol's SelfSubjectRulesReview")
	if got.Status.Incomplete {
		t.Errorf("carol's SelfSubjectRulesReview is incomplete: %s", got.Status.EvaluationError)
	}

	// A SubjectAccessReview about a ServiceAccount of another workspace in
	// system:kcp:admin: it is anonymous there, the group does not count.
	sar := func(cluster string) bool {
		body, _ := json.Marshal(map[string]any{"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "spec": map[string]any{
			"user": "system:serviceaccount:default:x", "groups": []string{"system:kcp:admin", "system:serviceaccounts", "system:authenticated"},
			"extra":              map[string][]string{"authentication.kubernetes.io/cluster-name": {cluster}},
			"resourceAttributes": map[string]any{"verb": "get", "resource": "configmaps", "namespace": "default"}}})
		r := s.AdminRequest(t, "POST", "/clusters/"+ws[1].Path+"/apis/authorization.k8s.io/v1/subjectaccessreviews", body)
		framework.RequireCode(t, r, "a SubjectAccessReview", 201)
		var out authorizationv1.SubjectAccessReview
		r.JSON(t, &out)
		return out.Status.Allowed
	}
	if sar(ws[0].Cluster) {
		t.Errorf("a ServiceAccount of %s kept system:kcp:admin in %s", ws[0].Path, ws[1].Path)
	}
	if !sar(ws[1].Cluster) {
		t.Errorf("a ServiceAccount of %s in system:kcp:admin may not read configmaps there", ws[1].Path)
	}
}
