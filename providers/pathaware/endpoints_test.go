package pathaware

import (
	"context"
	"errors"
	"sync"
	"testing"

	apisv1alpha1 "github.com/kcp-dev/sdk/apis/apis/v1alpha1"
	conditionsv1alpha1 "github.com/kcp-dev/sdk/apis/third_party/conditions/apis/conditions/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/multicluster-runtime/pkg/multicluster"

	"github.com/meshplane/meshplane/providers/scoped"
)

// recordingAware records engagements and keeps their contexts.
type recordingAware struct {
	mu   sync.Mutex
	ctxs map[multicluster.ClusterName]context.Context
	n    int
}

func (r *recordingAware) Engage(ctx context.Context, name multicluster.ClusterName, _ cluster.Cluster) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ctxs[name] = ctx
	r.n++
	return nil
}

// A workspace is engaged once however often its binding is seen, found by
// name and by path, and disengaged (its engagement's context ended) when
// it leaves.
func TestEngageOnceAndDisengage(t *testing.T) {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, apisv1alpha1.AddToScheme} {
		if err := add(s); err != nil {
			t.Fatal(err)
		}
	}
	cfg := &rest.Config{Host: "https://127.0.0.1:1"} // never asked: nothing here reads or starts a cache
	p, err := New(cfg, "slice", Options{Scheme: s, Resolve: func(context.Context, string) (string, error) { return "", errors.New("unused") }})
	if err != nil {
		t.Fatal(err)
	}
	se, err := scoped.NewEndpoint(rest.CopyConfig(cfg), scoped.Options{Scheme: s, Recorders: p.recorders})
	if err != nil {
		t.Fatal(err)
	}
	e := &endpoint{Endpoint: se, cancel: func() {}}
	aware := &recordingAware{ctxs: map[multicluster.ClusterName]context.Context{}}
	ctx := context.Background()
	p.engage(ctx, aware, e, "abc")
	p.engage(ctx, aware, e, "abc")
	if aware.n != 1 {
		t.Fatalf("the workspace was engaged %d times, want once", aware.n)
	}
	p.paths.Add("root:orgs", "abc")
	for _, name := range []multicluster.ClusterName{"abc", "root:orgs"} {
		cl, err := p.Get(ctx, name)
		if err != nil {
			t.Fatalf("Get(%s): %v", name, err)
		}
		if sc := cl.(*scoped.Cluster); sc.Name() != "abc" {
			t.Errorf("Get(%s) returned workspace %s", name, sc.Name())
		}
	}
	p.disengage("abc")
	if aware.ctxs["abc"].Err() == nil {
		t.Error("the engagement's context still runs after the workspace left")
	}
	if _, err := p.Get(ctx, "abc"); !errors.Is(err, multicluster.ErrClusterNotFound) {
		t.Errorf("Get after leaving: want ErrClusterNotFound, got %v", err)
	}
	p.engage(ctx, aware, e, "abc")
	if aware.n != 2 {
		t.Errorf("a workspace that came back was engaged %d times in all, want 2", aware.n)
	}
}

func TestReady(t *testing.T) {
	b := func(conds ...conditionsv1alpha1.Condition) *apisv1alpha1.APIBinding {
		x := &apisv1alpha1.APIBinding{}
		x.Status.Conditions = conds
		return x
	}
	for _, tc := range []struct {
		b    *apisv1alpha1.APIBinding
		want bool
	}{
		{b(), false},
		{b(conditionsv1alpha1.Condition{Type: "Other", Status: corev1.ConditionTrue}), false},
		{b(conditionsv1alpha1.Condition{Type: "Ready", Status: corev1.ConditionFalse}), false},
		{b(conditionsv1alpha1.Condition{Type: "Other", Status: corev1.ConditionFalse}, conditionsv1alpha1.Condition{Type: "Ready", Status: corev1.ConditionTrue}), true},
	} {
		if got := ready(tc.b); got != tc.want {
			t.Errorf("ready(%v) = %v, want %v", tc.b.Status.Conditions, got, tc.want)
		}
	}
}
