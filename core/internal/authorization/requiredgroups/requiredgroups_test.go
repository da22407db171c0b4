package requiredgroups

import (
	"context"
	"testing"

	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/meshplane/meshplane/core/internal/clusters"
)

func TestAuthorize(t *testing.T) {
	lcs := map[string]*corev1alpha1.LogicalCluster{
		"guarded": {ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{Annotation: "a,b;c"}}},
		"open":    {},
	}
	a := Authorizer{LogicalCluster: func(c string) (*corev1alpha1.LogicalCluster, bool) { lc, ok := lcs[c]; return lc, ok }}
	for _, tc := range []struct {
		name, cluster string
		u             user.Info
		deny          bool
	}{
		{"in both groups of a clause", "guarded", &user.DefaultInfo{Name: "bob", Groups: []string{"a", "b"}}, false},
		{"in the other clause", "guarded", &user.DefaultInfo{Name: "bob", Groups: []string{"c"}}, false},
		{"in half a clause", "guarded", &user.DefaultInfo{Name: "bob", Groups: []string{"a"}}, true},
		{"in no group", "guarded", &user.DefaultInfo{Name: "bob", Groups: []string{user.AllAuthenticated}}, true},
		{"service account", "guarded", &user.DefaultInfo{Name: "system:serviceaccount:default:x"}, false},
		{"system:masters", "guarded", &user.DefaultInfo{Name: "admin", Groups: []string{user.SystemPrivilegedGroup}}, false},
		{"kcp admin", "guarded", &user.DefaultInfo{Name: "kcp-admin", Groups: []string{"system:kcp:admin"}}, false},
		{"no annotation", "open", &user.DefaultInfo{Name: "bob"}, false},
		{"unknown cluster", "elsewhere", &user.DefaultInfo{Name: "bob"}, false},
		{"wildcard", clusters.Wildcard, &user.DefaultInfo{Name: "bob"}, false},
	} {
		d, _, _ := a.Authorize(clusters.WithCluster(context.Background(), tc.cluster), authorizer.AttributesRecord{User: tc.u, Verb: "get"})
		if got := d == authorizer.DecisionDeny; got != tc.deny {
			t.Errorf("%s: denied %v, want %v", tc.name, got, tc.deny)
		}
		if d == authorizer.DecisionAllow {
			t.Errorf("%s: allowed; the authorizer only refuses", tc.name)
		}
	}
}
