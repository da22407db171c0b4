package apis

import (
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestAPIBindingDeletionDeletesObjects deletes an APIBinding and checks that
// the binding goes, its resource is no longer served, and binding again
// finds none of the old objects.
func TestAPIBindingDeletionDeletesObjects(t *testing.T) {
	t.Parallel()
	s := server(t)
	org := s.CreateOrg(t, "e2e-unbind")
	ws := s.CreateWorkspaces(t, org.Path, "provider", "consumer")
	provider, consumer := ws[0], ws[1]
	s.ExportCRD(t, provider, apisCowboyCRD, apisCowboyExport)
	const ns = "unbind"
	s.Bind(t, consumer, "cowboys", provider, apisCowboyExport, nil)
	s.WaitBound(t, consumer, "cowboys", provider)
	apisEnsureNamespace(t, s, consumer.Path, ns)
	apisWaitServed(t, s, consumer, ns)
	apisCreateCowboy(t, s, consumer.Path, ns, "old")

	dyn := s.Dynamic(t, consumer.Path)
	if err := dyn.Resource(framework.APIBindingGVR).Delete(framework.CallContext(t), "cowboys", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("deleting the APIBinding: %v", err)
	}
	framework.Eventually(t, 30*time.Second, 200*time.Millisecond, "the APIBinding to be gone", func() (bool, string) {
		_, err := dyn.Resource(framework.APIBindingGVR).Get(framework.CallContext(t), "cowboys", metav1.GetOptions{})
		return apierrors.IsNotFound(err), "get: " + framework.ErrString(err)
	})
	if _, err := dyn.Resource(apisCowboyGVR).Namespace(ns).List(framework.CallContext(t), metav1.ListOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("cowboys must not be served after unbinding; list gave %v", err)
	}

	s.Bind(t, consumer, "cowboys", provider, apisCowboyExport, nil)
	s.WaitBound(t, consumer, "cowboys", provider)
	apisWaitServed(t, s, consumer, ns)
	list, err := dyn.Resource(apisCowboyGVR).Namespace(ns).List(framework.CallContext(t), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("listing cowboys after binding again: %v", err)
	}
	if len(list.Items) != 0 {
		t.Errorf("after unbinding and binding again, want no cowboys left, got %v", apisObjectKeys(list.Items))
	}
}
