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

// TestAPIBindingDeletionWaitsForFinalizers: as in kcp, a deleted APIBinding
// stays (and its resource stays served, in the consumer and to the
// provider's virtual workspace) while objects of its resources are held by
// finalizers, so the provider's controller can still clean up; it goes
// once they are released.
func TestAPIBindingDeletionWaitsForFinalizers(t *testing.T) {
	t.Parallel()
	s := server(t)
	org := s.CreateOrg(t, "e2e-unbind-fin")
	ws := s.CreateWorkspaces(t, org.Path, "provider", "consumer")
	provider, consumer := ws[0], ws[1]
	s.ExportCRD(t, provider, apisCowboyCRD, apisCowboyExport)
	const ns = "unbind"
	s.Bind(t, consumer, "cowboys", provider, apisCowboyExport, nil)
	apisEnsureNamespace(t, s, consumer.Path, ns)
	apisWaitServed(t, s, consumer, ns)
	held := apisCowboy(ns, "held", "ride")
	held.SetFinalizers([]string{"example.dev/cleanup"})
	dyn := s.Dynamic(t, consumer.Path)
	if _, err := dyn.Resource(apisCowboyGVR).Namespace(ns).Create(framework.CallContext(t), held, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := dyn.Resource(framework.APIBindingGVR).Delete(framework.CallContext(t), "cowboys", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("deleting the APIBinding: %v", err)
	}
	framework.Eventually(t, 30*time.Second, 200*time.Millisecond, "the held Cowboy to be marked deleted", func() (bool, string) {
		got, err := dyn.Resource(apisCowboyGVR).Namespace(ns).Get(framework.CallContext(t), "held", metav1.GetOptions{})
		return err == nil && got.GetDeletionTimestamp() != nil, framework.ErrString(err)
	})
	vw := s.VirtualWorkspaceRESTConfig(t, s.EndpointSliceURL(t, provider, apisCowboyExport), consumer.Cluster)
	vwCowboys := framework.DynamicFor(t, vw).Resource(apisCowboyGVR).Namespace(ns)
	// While the finalizer holds it, the binding stays and the provider
	// still reaches the object.
	for i := 0; i < 5; i++ {
		if _, err := dyn.Resource(framework.APIBindingGVR).Get(framework.CallContext(t), "cowboys", metav1.GetOptions{}); err != nil {
			t.Fatalf("the APIBinding went while an object is held by a finalizer: %v", err)
		}
		if _, err := vwCowboys.Get(framework.CallContext(t), "held", metav1.GetOptions{}); err != nil {
			t.Fatalf("the provider's virtual workspace lost the held object: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	// The provider's controller releases it; then the binding goes.
	if _, err := vwCowboys.Patch(framework.CallContext(t), "held", "application/merge-patch+json", []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
		t.Fatalf("removing the finalizer through the virtual workspace: %v", err)
	}
	framework.Eventually(t, 60*time.Second, 200*time.Millisecond, "the APIBinding to be gone", func() (bool, string) {
		_, err := dyn.Resource(framework.APIBindingGVR).Get(framework.CallContext(t), "cowboys", metav1.GetOptions{})
		return apierrors.IsNotFound(err), "get: " + framework.ErrString(err)
	})
}
