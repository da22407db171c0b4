package apiexport

import (
	"context"
	"time"

	apisv1alpha1 "github.com/kcp-dev/sdk/apis/apis/v1alpha1"
	conditionsv1alpha1 "github.com/kcp-dev/sdk/apis/third_party/conditions/apis/conditions/v1alpha1"
	"github.com/kcp-dev/sdk/apis/third_party/conditions/util/conditions"
	"k8s.io/apimachinery/pkg/api/equality"
)

// endpointsReconciler lists this shard's virtual workspace URL in a slice
// while any of its clusters binds the export (other shards add and remove
// their own URLs, as in kcp), and, for a slice of this shard, reports
// whether the export exists.
type endpointsReconciler struct {
	exportCluster func(cluster, path string) string
	exportExists  func(ctx context.Context, cluster, name string) bool
	bound         func(exportCluster, exportName string) bool
	updateStatus  func(ctx context.Context, cluster string, s *apisv1alpha1.APIExportEndpointSlice) error
	// externalURL is this shard's virtual workspace URL (its Shard's
	// spec.virtualWorkspaceURL).
	externalURL string
}

// ownURL is this shard's endpoint of an export.
func (r *endpointsReconciler) ownURL(exportCluster, exportName string) string {
	return r.externalURL + "/services/apiexport/" + exportCluster + "/" + exportName
}

// withOwnURL returns endpoints with this shard's URL present or not: the
// order of the URLs already there is kept (shards writing in turn must
// not reorder each other's), a new URL goes last.
func withOwnURL(endpoints []apisv1alpha1.APIExportEndpoint, own string, present bool) []apisv1alpha1.APIExportEndpoint {
	var out []apisv1alpha1.APIExportEndpoint
	found := false
	for _, e := range endpoints {
		switch {
		case e.URL != own:
			out = append(out, e)
		case present && !found:
			out = append(out, e)
			found = true
		}
	}
	if present && !found {
		out = append(out, apisv1alpha1.APIExportEndpoint{URL: own})
	}
	return out
}

// reconcileOther keeps this shard's URL in a slice of another shard (the
// replica's copy); that shard keeps its conditions.
func (r *endpointsReconciler) reconcileOther(ctx context.Context, cluster string, slice *apisv1alpha1.APIExportEndpointSlice) error {
	exportCluster := r.exportCluster(cluster, slice.Spec.APIExport.Path)
	if exportCluster == "" {
		return nil
	}
	own := r.ownURL(exportCluster, slice.Spec.APIExport.Name)
	// Without the export the slice's shard drops every URL: so does this one.
	present := slice.Spec.Partition == "" && r.bound(exportCluster, slice.Spec.APIExport.Name) &&
		r.exportExists(ctx, exportCluster, slice.Spec.APIExport.Name)
	want := slice.DeepCopy()
	want.Status.APIExportEndpoints = withOwnURL(slice.Status.APIExportEndpoints, own, present)
	if equality.Semantic.DeepEqual(want.Status.APIExportEndpoints, slice.Status.APIExportEndpoints) {
		return nil
	}
	return r.updateStatus(ctx, cluster, want)
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
		endpoints = withOwnURL(slice.Status.APIExportEndpoints, r.ownURL(exportCluster, exportName), r.bound(exportCluster, exportName) && partitionOK)
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
