package workspace

import (
	"context"
	"testing"

	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authentication/user"

	"github.com/meshplane/meshplane/core/internal/authorization/privileged"
	"github.com/meshplane/meshplane/core/internal/clusters"
	"github.com/meshplane/meshplane/core/internal/tenancy"
)

func TestValidateSystemFields(t *testing.T) {
	ctx := clusters.WithCluster(context.Background(), "bobcorp")
	bob := &user.DefaultInfo{Name: "bob", Groups: []string{user.AllAuthenticated}}
	masters := &user.DefaultInfo{Name: "shard-admin", Groups: []string{user.SystemPrivilegedGroup}}
	ws := func(cluster, url string, phase corev1alpha1.LogicalClusterPhaseType, owner string) *tenancyv1alpha1.Workspace {
		return &tenancyv1alpha1.Workspace{
			ObjectMeta: metav1.ObjectMeta{Name: "grab", UID: "uid-grab",
				Annotations: map[string]string{tenancyv1alpha1.ExperimentalWorkspaceOwnerAnnotationKey: owner}},
			Spec:   tenancyv1alpha1.WorkspaceSpec{Cluster: cluster, URL: url},
			Status: tenancyv1alpha1.WorkspaceStatus{Phase: phase},
		}
	}
	attrs := func(obj, old *tenancyv1alpha1.Workspace, sub string, u user.Info) admission.Attributes {
		op := admission.Create
		if old != nil {
			op = admission.Update
		}
		return admission.NewAttributesRecord(obj, old, tenancyv1alpha1.SchemeGroupVersion.WithKind("Workspace"), "", obj.Name,
			tenancyv1alpha1.SchemeGroupVersion.WithResource("workspaces"), sub, op, nil, false, u)
	}
	ready := ws("c1", "https://s/clusters/root:bobcorp:grab", corev1alpha1.LogicalClusterPhaseReady, `{"username":"bob"}`)
	p := New(nil, &tenancy.Index{}, nil)
	for _, tc := range []struct {
		name  string
		ctx   context.Context
		attrs admission.Attributes
		ok    bool
	}{
		{"bob creates a Workspace naming a cluster", ctx, attrs(ws("victim", "", "", ""), nil, "", bob), false},
		{"bob creates a Workspace with a URL", ctx, attrs(ws("", "https://127.0.0.1:1", "", ""), nil, "", bob), false},
		{"bob creates a plain Workspace", ctx, attrs(ws("", "", "", ""), nil, "", bob), true},
		{"system:masters names a cluster no Workspace owns yet", ctx, attrs(ws("new", "", "", ""), nil, "", masters), true},
		{"an impersonated system:masters names a cluster", privileged.WithImpersonated(ctx), attrs(ws("new", "", "", ""), nil, "", masters), false},
		{"bob changes spec.URL", ctx, attrs(ws("c1", "https://127.0.0.1:1", corev1alpha1.LogicalClusterPhaseReady, `{"username":"bob"}`), ready, "", bob), false},
		{"bob sets spec.cluster", ctx, attrs(ready, ws("", "", corev1alpha1.LogicalClusterPhaseScheduling, `{"username":"bob"}`), "", bob), false},
		{"bob changes the owner", ctx, attrs(ws("c1", ready.Spec.URL, corev1alpha1.LogicalClusterPhaseReady, `{"username":"alice"}`), ready, "", bob), false},
		{"bob writes the status", ctx, attrs(ws("c1", ready.Spec.URL, corev1alpha1.LogicalClusterPhaseTerminating, `{"username":"bob"}`), ready, "status", bob), false},
		{"bob labels his Workspace", ctx, attrs(ready, ready, "", bob), true},
		{"system:masters writes the status", ctx, attrs(ws("c1", ready.Spec.URL, corev1alpha1.LogicalClusterPhaseTerminating, `{"username":"bob"}`), ready, "status", masters), true},
	} {
		if err := p.Validate(tc.ctx, tc.attrs, nil); (err == nil) != tc.ok {
			t.Errorf("%s: err %v, want ok %v", tc.name, err, tc.ok)
		}
	}
}
