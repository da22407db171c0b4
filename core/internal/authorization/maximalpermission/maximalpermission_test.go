package maximalpermission

import (
	"context"
	"testing"

	apisv1alpha2 "github.com/kcp-dev/sdk/apis/apis/v1alpha2"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/meshplane/meshplane/core/internal/apiexport"
	"github.com/meshplane/meshplane/core/internal/clusters"
)

func TestAuthorizer(t *testing.T) {
	export := func(policy bool) *apisv1alpha2.APIExport {
		e := &apisv1alpha2.APIExport{Spec: apisv1alpha2.APIExportSpec{Resources: []apisv1alpha2.ResourceSchema{{Group: "example.com", Name: "widgets"}}}}
		if policy {
			e.Spec.MaximalPermissionPolicy = &apisv1alpha2.MaximalPermissionPolicy{Local: &apisv1alpha2.LocalAPIExportPolicy{}}
		}
		return e
	}
	var asked authorizer.Attributes
	var askedCluster string
	for _, tc := range []struct {
		name      string
		policy    bool
		user      user.Info
		resource  string
		allowedBy string // the prefixed name RBAC allows
		want      authorizer.Decision
		wantAsked string
	}{
		{"no policy", false, &user.DefaultInfo{Name: "bob"}, "widgets", "", authorizer.DecisionNoOpinion, ""},
		{"policy allows the prefixed user", true, &user.DefaultInfo{Name: "bob"}, "widgets", Prefix + "bob", authorizer.DecisionNoOpinion, Prefix + "bob"},
		{"policy does not allow", true, &user.DefaultInfo{Name: "bob"}, "widgets", "", authorizer.DecisionDeny, Prefix + "bob"},
		{"other resources are not bounded", true, &user.DefaultInfo{Name: "bob"}, "gadgets", "", authorizer.DecisionNoOpinion, ""},
		{"system:masters is not bounded", true, &user.DefaultInfo{Name: "admin", Groups: []string{user.SystemPrivilegedGroup}}, "widgets", "", authorizer.DecisionNoOpinion, ""},
		{"service accounts by their global name", true, &user.DefaultInfo{Name: "system:serviceaccount:default:robot",
			Extra: map[string][]string{"authentication.kubernetes.io/cluster-name": {"cons"}}}, "widgets", "", authorizer.DecisionDeny,
			Prefix + "system:kcp:serviceaccount:cons:default:robot"},
	} {
		asked, askedCluster = nil, ""
		a := &Authorizer{
			ExportsOf: func(string) []apiexport.ExportRef { return []apiexport.ExportRef{{Cluster: "prov", Name: "widgets"}} },
			Export: func(context.Context, string, string) (*apisv1alpha2.APIExport, error) {
				return export(tc.policy), nil
			},
			RBAC: authorizer.AuthorizerFunc(func(ctx context.Context, attrs authorizer.Attributes) (authorizer.Decision, string, error) {
				asked = attrs
				askedCluster, _ = clusters.From(ctx)
				if attrs.GetUser().GetName() == tc.allowedBy {
					return authorizer.DecisionAllow, "", nil
				}
				return authorizer.DecisionNoOpinion, "", nil
			}),
		}
		ctx := clusters.WithCluster(context.Background(), "cons")
		d, _, _ := a.Authorize(ctx, authorizer.AttributesRecord{User: tc.user, Verb: "create", APIGroup: "example.com", Resource: tc.resource, ResourceRequest: true})
		if d != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, d, tc.want)
		}
		switch {
		case tc.wantAsked == "" && asked != nil:
			t.Errorf("%s: asked the export's RBAC about %s", tc.name, asked.GetUser().GetName())
		case tc.wantAsked != "" && (asked == nil || asked.GetUser().GetName() != tc.wantAsked || askedCluster != "prov"):
			t.Errorf("%s: asked %v in %q, want %s in prov", tc.name, asked, askedCluster, tc.wantAsked)
		}
	}
}
