package framework_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestLifecycleController runs the kit's initializer for a WorkspaceType
// and checks that the workspace waits for it, gets what its action made,
// and becomes Ready.
func TestLifecycleController(t *testing.T) {
	s := framework.SharedServer(t)
	typeName := framework.UniqueName("kit-init")
	id := "root:" + typeName
	wt := s.CreateWorkspaceType(t, typeName, true, false)
	vw := framework.VirtualWorkspaceURL(wt, tenancyv1alpha1.VirtualWorkspaceTypeInitializing)

	name := framework.UniqueName("kit-initws")
	s.CreateWorkspaceOfType(t, "root", name, tenancyv1alpha1.WorkspaceTypeReference{Name: tenancyv1alpha1.WorkspaceTypeName(typeName), Path: "root"})
	rootCfg := s.RESTConfig(t, "root")
	framework.WaitWorkspacePhase(t, rootCfg, name, string(corev1alpha1.LogicalClusterPhaseInitializing), time.Minute)

	kcpAdmin := s.ContextRESTConfig(t, "root", "")
	ctrl := framework.RunLifecycleController(t, framework.Initializer, id, vw, kcpAdmin,
		func(ctx context.Context, cfg *rest.Config, lc *corev1alpha1.LogicalCluster) error {
			cs, err := kubernetes.NewForConfig(cfg)
			if err != nil {
				return err
			}
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "initialized-by"}, Data: map[string]string{"initializer": id, "path": lc.Annotations[framework.PathAnnotation]}}
			if _, err := cs.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("creating configmap default/initialized-by: %w", err) // default may still be on its way
			}
			return nil
		})

	ws := framework.WaitWorkspacePhase(t, rootCfg, name, string(corev1alpha1.LogicalClusterPhaseReady), 90*time.Second)
	if len(ws.Status.Initializers) != 0 {
		t.Fatalf("workspace %s is Ready with initializers %v", name, ws.Status.Initializers)
	}
	path := "root:" + name
	framework.RequireData(t, s.KubectlFor(path).GetConfigMap(t, "default", "initialized-by"), map[string]string{"initializer": id, "path": path}, "configmap made by the initializer")
	framework.RequireEqual(t, fmt.Sprint(ctrl.FinishedPaths()), fmt.Sprint([]string{path}), "workspaces the initializer finished")
}
