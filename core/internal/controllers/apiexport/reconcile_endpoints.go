package apiexport

import (
	"context"
	"time"

	apisv1alpha1 "github.com/kcp-dev/sdk/apis/apis/v1alpha1"
	conditionsv1alpha1 "github.com/kcp-dev/sdk/apis/third_party/conditions/apis/conditions/v1alpha1"
	"github.com/kcp-dev/sdk/apis/third_party/conditions/util/conditions"
	"k8s.io/apimachinery/pkg/api/equality"
)

// endpointsReconciler points a slice at its export's virtual workspace
// while any cluster binds the export, and reports whether the export
// exists.
type endpointsReconciler struct {
	exportCluster func(cluster, path string) string
	exportExists  func(ctx context.Context, cluster, name string) bool
	bound         func(exportCluster, exportName string) bool
	updateStatus  func(ctx context.Context, cluster string, s *apisv1alpha1.APIExportEndpointSlice) error
	externalURL   string
}

func (r *endpointsReconciler) reconcile(ctx context.Context, cluster string, slice *apisv1alpha1.APIExportEndpointSlice) (time.Duration, error) {
	exportName := slice.Spec.APIExport.Name
	exportCluster := r.exportCluster(cluster, slice.Spec.APIExport.Path)
	var endpoints []apisv1alpha1.APIExportEndpoint
	valid := false
	// This shard serves no topology.kcp.io Partitions: a slice naming one
	// names a missing one, which kcp answers with PartitionValid False
	// and no endpoints.
	partitionOK := slice.Spec.Partition == ""
	if exportCluster != "" && r.exportExists(ctx, exportCluster, exportName) {
		valid = true
		if r.bound(exportCluster, exportName) && partitionOK {
			endpoints = []apisv1alpha1.APIExportEndpoint{{URL: r.externalURL + "/services/apiexport/" + exportCluster + "/" + exportName}}
		}
	}
	want := slice.DeepCopy()
	want.Status.APIExportEndpoints = endpoints
	if valid {
		conditions.MarkTrue(want, apisv1alpha1.APIExportValid)
	} else {
		conditions.MarkFalse(want, apisv1alpha1.APIExportValid, apisv1alpha1.APIExportNotFoundReason, "Error", "APIExport %s not found", exportName)
	}
	if valid {
		if partitionOK {
			conditions.MarkTrue(want, apisv1alpha1.PartitionValid)
			conditions.MarkTrue(want, apisv1alpha1.APIExportEndpointSliceURLsReady)
		} else {
			conditions.MarkFalse(want, apisv1alpha1.PartitionValid, apisv1alpha1.PartitionInvalidReferenceReason, conditionsv1alpha1.ConditionSeverityError,
				"partitions.topology.kcp.io %q not found", slice.Spec.Partition)
			conditions.MarkFalse(want, apisv1alpha1.APIExportEndpointSliceURLsReady, apisv1alpha1.ErrorGeneratingURLsReason, conditionsv1alpha1.ConditionSeverityError, "")
		}
	}
	if equality.Semantic.DeepEqual(want.Status, slice.Status) {
		if !valid {
			return 5 * time.Second, nil
		}
		return 0, nil
	}
	return 0, r.updateStatus(ctx, cluster, want)
}
