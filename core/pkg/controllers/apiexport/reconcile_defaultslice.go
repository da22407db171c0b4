package apiexport

import (
	"context"

	apisv1alpha1 "github.com/kcp-dev/sdk/apis/apis/v1alpha1"
	apisv1alpha2 "github.com/kcp-dev/sdk/apis/apis/v1alpha2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// defaultSliceReconciler creates an export's default endpoint slice (same
// name, same cluster) unless the export carries SkipSliceAnnotation.
type defaultSliceReconciler struct {
	path        func(cluster string) string
	createSlice func(ctx context.Context, cluster string, s *apisv1alpha1.APIExportEndpointSlice) error
}

func (r *defaultSliceReconciler) reconcile(ctx context.Context, cluster string, export *apisv1alpha2.APIExport) error {
	if export.Annotations[SkipSliceAnnotation] != "" {
		return nil
	}
	slice := &apisv1alpha1.APIExportEndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: export.Name},
		Spec: apisv1alpha1.APIExportEndpointSliceSpec{APIExport: apisv1alpha1.ExportBindingReference{Path: r.path(cluster), Name: export.Name}}}
	if err := r.createSlice(ctx, cluster, slice); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}
