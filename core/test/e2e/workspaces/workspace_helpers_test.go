package workspaces

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// typeAnnotation is the workspace type kcp puts on every LogicalCluster
// (framework.PathAnnotation is its path).
const typeAnnotation = "internal.tenancy.kcp.io/type"

// builtinWorkspaceTypes are the WorkspaceTypes root has from the start.
var builtinWorkspaceTypes = []string{"root", "universal", "organization", "team", "home"}

// kcpScheme knows the built-in Kubernetes types and kcp's tenancy and core
// types.
var kcpScheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, tenancyv1alpha1.AddToScheme, corev1alpha1.AddToScheme} {
		if err := add(s); err != nil {
			panic(err)
		}
	}
	return s
}()

// kcpClient is a controller-runtime client with kcpScheme.
func kcpClient(t *testing.T, cfg *rest.Config) client.Client {
	t.Helper()
	c, err := client.New(cfg, client.Options{Scheme: kcpScheme})
	if err != nil {
		t.Fatalf("building a controller-runtime client for %s: %v", cfg.Host, err)
	}
	return c
}

// adminClient is a client acting as kcp-admin on a workspace path or
// logical cluster name.
func adminClient(t *testing.T, s *framework.Server, cluster string) client.Client {
	t.Helper()
	return kcpClient(t, s.KCPAdminRESTConfig(t, cluster))
}

func testContext(t *testing.T, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// describeWorkspace summarizes a Workspace for failure messages.
func describeWorkspace(ws *tenancyv1alpha1.Workspace) string {
	var conds []string
	for _, c := range ws.Status.Conditions {
		s := fmt.Sprintf("%s=%s", c.Type, c.Status)
		if c.Reason != "" || c.Message != "" {
			s += fmt.Sprintf(" (%s: %s)", c.Reason, c.Message)
		}
		conds = append(conds, s)
	}
	typ := "<none>"
	if ws.Spec.Type != nil {
		typ = ws.Spec.Type.Path + ":" + string(ws.Spec.Type.Name)
	}
	del := ""
	if ws.DeletionTimestamp != nil {
		del = fmt.Sprintf(" deletionTimestamp=%s finalizers=%v", ws.DeletionTimestamp.Format(time.RFC3339), ws.Finalizers)
	}
	return fmt.Sprintf("workspace %s: type=%s phase=%q cluster=%q URL=%q initializers=%v terminators=%v conditions=[%s]%s",
		ws.Name, typ, ws.Status.Phase, ws.Spec.Cluster, ws.Spec.URL, ws.Status.Initializers, ws.Status.Terminators, strings.Join(conds, "; "), del)
}

// describeLogicalCluster summarizes a LogicalCluster for failure messages.
func describeLogicalCluster(lc *corev1alpha1.LogicalCluster) string {
	del := ""
	if lc.DeletionTimestamp != nil {
		del = " deleting"
	}
	return fmt.Sprintf("logicalcluster of %s (cluster %s, type %s): phase=%q initializers=%v (spec %v) terminators=%v (spec %v) labels=%v%s",
		lc.Annotations[framework.PathAnnotation], lc.Annotations[framework.ClusterAnnotation], lc.Annotations[typeAnnotation], lc.Status.Phase,
		lc.Status.Initializers, lc.Spec.Initializers, lc.Status.Terminators, lc.Spec.Terminators, lc.Labels, del)
}

// createWorkspace creates a Workspace of type root:<typeName> (no type when
// typeName is empty) through c, which talks to the parent workspace.
func createWorkspace(t *testing.T, c client.Client, name, typeName string) *tenancyv1alpha1.Workspace {
	t.Helper()
	ws := &tenancyv1alpha1.Workspace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if typeName != "" {
		ws.Spec.Type = &tenancyv1alpha1.WorkspaceTypeReference{Name: tenancyv1alpha1.WorkspaceTypeName(typeName), Path: "root"}
	}
	if err := c.Create(testContext(t, time.Minute), ws); err != nil {
		t.Fatalf("creating workspace %s (type %q): %v", name, typeName, err)
	}
	t.Logf("created workspace %s (type %q)", name, typeName)
	return ws
}

// deleteWorkspaceLater deletes the workspace when the test ends (best effort:
// the shared server is not waited for).
func deleteWorkspaceLater(t *testing.T, c client.Client, name string) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		err := c.Delete(ctx, &tenancyv1alpha1.Workspace{ObjectMeta: metav1.ObjectMeta{Name: name}})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Logf("cleanup: deleting workspace %s: %v", name, err)
		}
	})
}

// getWorkspace fetches a Workspace through c.
func getWorkspace(ctx context.Context, c client.Client, name string) (*tenancyv1alpha1.Workspace, error) {
	ws := &tenancyv1alpha1.Workspace{}
	err := c.Get(ctx, client.ObjectKey{Name: name}, ws)
	return ws, err
}

// waitWorkspace polls the Workspace until cond holds.
func waitWorkspace(t *testing.T, c client.Client, name string, timeout time.Duration, what string, cond func(*tenancyv1alpha1.Workspace) bool) *tenancyv1alpha1.Workspace {
	t.Helper()
	var last *tenancyv1alpha1.Workspace
	framework.Eventually(t, timeout, 250*time.Millisecond, fmt.Sprintf("workspace %s %s", name, what), func() (bool, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		ws, err := getWorkspace(ctx, c, name)
		if err != nil {
			return false, fmt.Sprintf("getting workspace %s: %v", name, err)
		}
		last = ws
		return cond(ws), describeWorkspace(ws)
	})
	return last
}

// waitWorkspacePhase waits until the Workspace is in phase.
func waitWorkspacePhase(t *testing.T, c client.Client, name string, phase corev1alpha1.LogicalClusterPhaseType, timeout time.Duration) *tenancyv1alpha1.Workspace {
	t.Helper()
	return waitWorkspace(t, c, name, timeout, "to be "+string(phase), func(ws *tenancyv1alpha1.Workspace) bool {
		return ws.Status.Phase == phase
	})
}

// waitWorkspaceGone waits until the Workspace does not exist any more.
func waitWorkspaceGone(t *testing.T, c client.Client, name string, timeout time.Duration) {
	t.Helper()
	framework.Eventually(t, timeout, 250*time.Millisecond, fmt.Sprintf("workspace %s to be deleted", name), func() (bool, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		ws, err := getWorkspace(ctx, c, name)
		if apierrors.IsNotFound(err) {
			return true, ""
		}
		if err != nil {
			return false, fmt.Sprintf("getting workspace %s: %v", name, err)
		}
		return false, "still there: " + describeWorkspace(ws)
	})
}

// requireStaysInPhase checks that the Workspace keeps phase for d.
func requireStaysInPhase(t *testing.T, c client.Client, name string, phase corev1alpha1.LogicalClusterPhaseType, d time.Duration, why string) {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		ws, err := getWorkspace(ctx, c, name)
		cancel()
		if err != nil {
			t.Fatalf("workspace %s should stay %s for %s (%s), but getting it failed: %v", name, phase, d, why, err)
		}
		if ws.Status.Phase != phase {
			t.Fatalf("workspace %s should stay %s for %s (%s), but: %s", name, phase, d, why, describeWorkspace(ws))
		}
		time.Sleep(500 * time.Millisecond)
	}
}
