package workspacetype

import (
	"context"
	"fmt"
	"testing"

	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
	"github.com/kcp-dev/sdk/apis/third_party/conditions/util/conditions"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/meshplane/meshplane/core/internal/reconciler/runner"
)

// fakeTypes is a client.Client holding one WorkspaceType and recording
// the status it is given.
type fakeTypes struct {
	wt     *tenancyv1alpha1.WorkspaceType
	status *tenancyv1alpha1.WorkspaceType
}

func (f *fakeTypes) Get(_ context.Context, _, _, name string) (*tenancyv1alpha1.WorkspaceType, error) {
	if f.wt == nil || f.wt.Name != name {
		return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "workspacetypes"}, name)
	}
	return f.wt, nil
}
func (f *fakeTypes) GetCached(ctx context.Context, c, ns, name string) (*tenancyv1alpha1.WorkspaceType, error) {
	return f.Get(ctx, c, ns, name)
}
func (f *fakeTypes) List(context.Context, string, string, *metainternalversion.ListOptions) (runtime.Object, error) {
	return nil, nil
}
func (f *fakeTypes) Create(_ context.Context, _, _ string, o *tenancyv1alpha1.WorkspaceType) (*tenancyv1alpha1.WorkspaceType, error) {
	return o, nil
}
func (f *fakeTypes) Update(_ context.Context, _, _, _ string, o *tenancyv1alpha1.WorkspaceType) (*tenancyv1alpha1.WorkspaceType, error) {
	return o, nil
}
func (f *fakeTypes) UpdateStatus(_ context.Context, _, _, _ string, o *tenancyv1alpha1.WorkspaceType) (*tenancyv1alpha1.WorkspaceType, error) {
	f.status = o
	return o, nil
}
func (f *fakeTypes) Delete(context.Context, string, string, string) error { return nil }

func TestReconcile(t *testing.T) {
	tests := []struct {
		name      string
		spec      tenancyv1alpha1.WorkspaceTypeSpec
		wantTypes []tenancyv1alpha1.VirtualWorkspaceType
	}{
		{"initializer and terminator", tenancyv1alpha1.WorkspaceTypeSpec{Initializer: true, Terminator: true},
			[]tenancyv1alpha1.VirtualWorkspaceType{tenancyv1alpha1.VirtualWorkspaceTypeInitializing, tenancyv1alpha1.VirtualWorkspaceTypeTerminating}},
		{"neither", tenancyv1alpha1.WorkspaceTypeSpec{}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeTypes{wt: &tenancyv1alpha1.WorkspaceType{ObjectMeta: metav1.ObjectMeta{Name: "team"}, Spec: tt.spec}}
			c := New(f, oneShard, nil, nil)
			if _, err := c.reconcile(context.Background(), runner.Key{Cluster: "root", Name: "team"}); err != nil {
				t.Fatalf("reconcile: %v", err)
			}
			if f.status == nil || !conditions.IsTrue(f.status, tenancyv1alpha1.WorkspaceTypeVirtualWorkspaceURLsReady) {
				t.Fatalf("status written = %v, want URLs ready", f.status)
			}
			if !conditions.IsTrue(f.status, "Ready") {
				t.Errorf("conditions = %v, want Ready", f.status.Status.Conditions)
			}
			vws := f.status.Status.VirtualWorkspaces
			if len(vws) != len(tt.wantTypes) {
				t.Fatalf("virtual workspaces = %v, want types %v", vws, tt.wantTypes)
			}
			for i, vw := range vws {
				if vw.Type != tt.wantTypes[i] {
					t.Errorf("virtual workspace %d has type %s, want %s", i, vw.Type, tt.wantTypes[i])
				}
			}
			if len(vws) > 0 && vws[0].URL != "https://example/services/initializingworkspaces/root:team" {
				t.Errorf("initializing URL = %s", vws[0].URL)
			}
			// A second round with the written status changes nothing.
			f.wt, f.status = f.status, nil
			if _, err := c.reconcile(context.Background(), runner.Key{Cluster: "root", Name: "team"}); err != nil {
				t.Fatalf("reconcile: %v", err)
			}
			if f.status != nil {
				t.Errorf("status rewritten although up to date: %v", f.status.Status.VirtualWorkspaces)
			}
		})
	}
}

// oneShard lists the one shard of an install.
func oneShard(context.Context) ([]corev1alpha1.Shard, error) {
	return []corev1alpha1.Shard{{ObjectMeta: metav1.ObjectMeta{Name: "root"}, Spec: corev1alpha1.ShardSpec{VirtualWorkspaceURL: "https://example"}}}, nil
}

// TestURLsPerShard: one URL per shard and kind, sorted; a shard without a
// virtual workspace URL has none.
func TestURLsPerShard(t *testing.T) {
	shards := []corev1alpha1.Shard{
		{ObjectMeta: metav1.ObjectMeta{Name: "root"}, Spec: corev1alpha1.ShardSpec{VirtualWorkspaceURL: "https://root.example"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "b"}, Spec: corev1alpha1.ShardSpec{VirtualWorkspaceURL: "https://b.example/"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "c"}},
	}
	wt := &tenancyv1alpha1.WorkspaceType{Spec: tenancyv1alpha1.WorkspaceTypeSpec{Initializer: true, Terminator: true}}
	var got []string
	for _, vw := range urls(wt, "root:team", shards) {
		got = append(got, string(vw.Type)+" "+vw.URL)
	}
	want := []string{
		"initializing https://b.example/services/initializingworkspaces/root:team",
		"terminating https://b.example/services/terminatingworkspaces/root:team",
		"initializing https://root.example/services/initializingworkspaces/root:team",
		"terminating https://root.example/services/terminatingworkspaces/root:team",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("urls = %v, want %v", got, want)
	}
}
