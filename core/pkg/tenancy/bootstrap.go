package tenancy

import (
	"context"
	"fmt"

	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/meshplane/meshplane/core/pkg/clusters"
	"github.com/meshplane/meshplane/core/pkg/reconciler/client"
)

// Clients are what bootstrap, the home handler and the tenancy
// controllers read and write.
type Clients struct {
	LogicalClusters client.Client[*corev1alpha1.LogicalCluster]
	Workspaces      client.Client[*tenancyv1alpha1.Workspace]
	Types           client.Client[*tenancyv1alpha1.WorkspaceType]
	Namespaces      client.Client[*corev1.Namespace]
}

func ref(name string) *tenancyv1alpha1.WorkspaceTypeReference {
	return &tenancyv1alpha1.WorkspaceTypeReference{Name: tenancyv1alpha1.WorkspaceTypeName(name), Path: clusters.Root}
}

func refs1(names ...string) []tenancyv1alpha1.WorkspaceTypeReference {
	var out []tenancyv1alpha1.WorkspaceTypeReference
	for _, n := range names {
		out = append(out, *ref(n))
	}
	return out
}

// BuiltinTypes are the workspace types every server has in root.
func BuiltinTypes() []*tenancyv1alpha1.WorkspaceType {
	universal := tenancyv1alpha1.WorkspaceTypeExtension{With: refs1("universal")}
	t := func(name string, spec tenancyv1alpha1.WorkspaceTypeSpec) *tenancyv1alpha1.WorkspaceType {
		return &tenancyv1alpha1.WorkspaceType{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec}
	}
	return []*tenancyv1alpha1.WorkspaceType{
		t("root", tenancyv1alpha1.WorkspaceTypeSpec{
			LimitAllowedParents:       &tenancyv1alpha1.WorkspaceTypeSelector{None: true},
			DefaultChildWorkspaceType: ref("organization"),
		}),
		t("universal", tenancyv1alpha1.WorkspaceTypeSpec{Initializer: true, DefaultChildWorkspaceType: ref("universal")}),
		t("organization", tenancyv1alpha1.WorkspaceTypeSpec{
			Extend:                    universal,
			LimitAllowedParents:       &tenancyv1alpha1.WorkspaceTypeSelector{Types: refs1("root")},
			DefaultChildWorkspaceType: ref("universal"),
		}),
		t("team", tenancyv1alpha1.WorkspaceTypeSpec{
			Extend:                    universal,
			LimitAllowedParents:       &tenancyv1alpha1.WorkspaceTypeSelector{Types: refs1("organization", "team")},
			DefaultChildWorkspaceType: ref("universal"),
		}),
		t("home", tenancyv1alpha1.WorkspaceTypeSpec{
			Extend:                    universal,
			LimitAllowedParents:       &tenancyv1alpha1.WorkspaceTypeSelector{None: true},
			DefaultChildWorkspaceType: ref("universal"),
		}),
	}
}

// Bootstrap makes sure the root logical cluster, its default namespace and
// the built-in workspace types exist. externalURL is the server's base URL.
func Bootstrap(ctx context.Context, c Clients, externalURL string) error {
	_, err := c.LogicalClusters.Get(ctx, clusters.Root, "", corev1alpha1.LogicalClusterName)
	if apierrors.IsNotFound(err) {
		lc := &corev1alpha1.LogicalCluster{
			ObjectMeta: metav1.ObjectMeta{
				Name:        corev1alpha1.LogicalClusterName,
				Annotations: map[string]string{PathAnnotation: clusters.Root, TypeAnnotation: "root:root"},
			},
			Status: corev1alpha1.LogicalClusterStatus{Phase: corev1alpha1.LogicalClusterPhaseReady, URL: externalURL + "/clusters/root"},
		}
		if _, err := c.LogicalClusters.Create(ctx, clusters.Root, "", lc); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating root logical cluster: %w", err)
		}
	} else if err != nil {
		return err
	}
	if _, err := c.Namespaces.Create(ctx, clusters.Root, "", &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "default"}}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating root's default namespace: %w", err)
	}
	for _, t := range BuiltinTypes() {
		if _, err := c.Types.Create(ctx, clusters.Root, "", t); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating workspace type %s: %w", t.Name, err)
		}
	}
	return nil
}
