package workspace

import (
	"context"
	"testing"

	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
	"github.com/kcp-dev/sdk/apis/third_party/conditions/util/conditions"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/meshplane/meshplane/core/pkg/tenancy"
)

func TestSchedulingReconciler(t *testing.T) {
	universal := tenancy.Type{Path: "root", WorkspaceType: &tenancyv1alpha1.WorkspaceType{ObjectMeta: metav1.ObjectMeta{Name: "universal"},
		Spec: tenancyv1alpha1.WorkspaceTypeSpec{Initializer: true}}}
	plain := tenancy.Type{Path: "root", WorkspaceType: &tenancyv1alpha1.WorkspaceType{ObjectMeta: metav1.ObjectMeta{Name: "plain"}}}
	tests := []struct {
		name      string
		typ       tenancy.Type
		owner     string // owner annotation
		wantInits int
		wantAdmin string
	}{
		{name: "type with initializer, owner bound", typ: universal, owner: `{"username":"alice"}`, wantInits: 1, wantAdmin: "alice"},
		{name: "no initializer, no owner", typ: plain},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := workspace("", "", false)
			ws.Spec.Type = &tenancyv1alpha1.WorkspaceTypeReference{Name: tenancyv1alpha1.WorkspaceTypeName(tt.typ.Name)}
			if tt.owner != "" {
				ws.Annotations = map[string]string{tenancyv1alpha1.ExperimentalWorkspaceOwnerAnnotationKey: tt.owner}
			}
			rec := &recorder{}
			var created struct{ cluster, path, typeID, url string }
			var owner *corev1alpha1.LogicalClusterOwner
			var admin string
			r := &schedulingReconciler{
				path: func(string) string { return "root:org" },
				resolveType: func(_ context.Context, ref tenancyv1alpha1.WorkspaceTypeReference, from string) (tenancy.Type, error) {
					if from != "root:org" {
						t.Errorf("type resolved from %q, want root:org", from)
					}
					return tt.typ, nil
				},
				aliases: func(_ context.Context, t tenancy.Type) ([]tenancy.Type, error) { return []tenancy.Type{t}, nil },
				createLogicalCluster: func(_ context.Context, cluster, path, typeID, url string, _ *authenticationv1.UserInfo,
					inits []corev1alpha1.LogicalClusterInitializer, _ []corev1alpha1.LogicalClusterTerminator, o *corev1alpha1.LogicalClusterOwner) error {
					created.cluster, created.path, created.typeID, created.url = cluster, path, typeID, url
					owner = o
					if len(inits) != tt.wantInits {
						t.Errorf("logical cluster created with initializers %v, want %d", inits, tt.wantInits)
					}
					return nil
				},
				ensureAdmin: func(_ context.Context, _ string, o *authenticationv1.UserInfo) error { admin = o.Username; return nil },
				update:      rec.update, updateStatus: rec.updateStatus,
				externalURL: "https://example",
			}
			if err := r.reconcile(context.Background(), "p1", ws); err != nil {
				t.Fatalf("reconcile: %v", err)
			}
			wantCluster := tenancy.WorkspaceClusterName("p1", "uid-1")
			if created.cluster != wantCluster || created.path != "root:org:team" || created.typeID != tt.typ.ID() ||
				created.url != "https://example/clusters/root:org:team" {
				t.Errorf("created logical cluster %+v, want cluster %s at root:org:team of type %s", created, wantCluster, tt.typ.ID())
			}
			if owner == nil || owner.Cluster != "p1" || owner.Name != "team" || owner.Resource != "workspaces" {
				t.Errorf("logical cluster owner = %+v, want workspace p1|team", owner)
			}
			if admin != tt.wantAdmin {
				t.Errorf("admin bound = %q, want %q", admin, tt.wantAdmin)
			}
			if rec.updated == nil || rec.updated.Spec.Cluster != wantCluster || rec.updated.Spec.URL != created.url ||
				rec.updated.Spec.Type.Path != "root" {
				t.Fatalf("workspace spec written = %+v, want cluster %s and type path root", rec.updated, wantCluster)
			}
			if rec.status == nil || rec.status.Status.Phase != corev1alpha1.LogicalClusterPhaseInitializing ||
				!conditions.IsTrue(rec.status, tenancyv1alpha1.WorkspaceScheduled) {
				t.Errorf("status written = %+v, want Initializing and Scheduled", rec.status)
			}
		})
	}
}

func TestSchedulingReconcilerNeedsType(t *testing.T) {
	r := &schedulingReconciler{path: func(string) string { return "root" }}
	if err := r.reconcile(context.Background(), "p1", workspace("", "", false)); err == nil {
		t.Fatal("a workspace without type was scheduled, want an error")
	}
}
