package framework_test

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// A module's tests (or any program) start a core with the kit alone: the
// meshplane binary is found by framework.Binary ($MESHPLANE_BIN, bin/, or
// built from core/).
func ExampleStart() {
	s, err := framework.Start()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Cleanup(false)

	cfg, err := s.Config("root", "root") // kcp-admin on workspace root
	if err != nil {
		fmt.Println(err)
		return
	}
	ns, err := kubernetes.NewForConfigOrDie(cfg).CoreV1().Namespaces().Get(context.Background(), "default", metav1.GetOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("namespace", ns.Name, "is", ns.Status.Phase)
	// Output: namespace default is Active
}
