package server

import (
	"context"
	"testing"

	kcpcache "github.com/kcp-dev/apimachinery/v2/pkg/cache"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/meshplane/meshplane/core/internal/clusters"
)

// Namespace admission reads a namespace of the request's cluster from the
// informer's store, never another cluster's namespace of the same name,
// and asks the registry when the store does not have it.
func TestInformerNamespaceGetter(t *testing.T) {
	store := cache.NewStore(kcpcache.MetaClusterNamespaceKeyFunc)
	inA := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "work", Annotations: map[string]string{clusters.Annotation: "a"}},
		Status: corev1.NamespaceStatus{Phase: corev1.NamespaceTerminating}}
	if err := store.Add(inA); err != nil {
		t.Fatal(err)
	}
	var asked []string
	fromRegistry := func(ctx context.Context, name string) (*corev1.Namespace, error) {
		c, _ := clusters.From(ctx)
		asked = append(asked, c+"/"+name)
		if c == "b" && name == "work" {
			return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "work"}}, nil
		}
		return nil, apierrors.NewNotFound(corev1.Resource("namespaces"), name)
	}
	get := informerNamespaceGetter(store, fromRegistry)

	ns, err := get(clusters.WithCluster(context.Background(), "a"), "work")
	if err != nil || ns != inA {
		t.Fatalf("a/work: %v, %v; want the informer's object", ns, err)
	}
	if len(asked) != 0 {
		t.Errorf("the registry was asked for %v although the informer has a/work", asked)
	}
	ns, err = get(clusters.WithCluster(context.Background(), "b"), "work")
	if err != nil || ns == inA || ns.Status.Phase == corev1.NamespaceTerminating {
		t.Fatalf("b/work: %+v, %v; want the registry's namespace of cluster b", ns, err)
	}
	if _, err := get(clusters.WithCluster(context.Background(), "a"), "gone"); !apierrors.IsNotFound(err) {
		t.Errorf("a/gone: %v, want NotFound from the registry", err)
	}
	if want := []string{"b/work", "a/gone"}; len(asked) != 2 || asked[0] != want[0] || asked[1] != want[1] {
		t.Errorf("registry asked for %v, want %v", asked, want)
	}
}
