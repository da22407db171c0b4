package apiexport

import (
	"context"
	"strings"
	"testing"
	"time"

	apisv1alpha1 "github.com/kcp-dev/sdk/apis/apis/v1alpha1"
	"github.com/kcp-dev/sdk/apis/third_party/conditions/util/conditions"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestEndpointsReconciler(t *testing.T) {
	const url = "https://example/services/apiexport/provider/widgets"
	slice := func(valid bool, endpoints ...string) *apisv1alpha1.APIExportEndpointSlice {
		s := &apisv1alpha1.APIExportEndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: "widgets"},
			Spec: apisv1alpha1.APIExportEndpointSliceSpec{APIExport: apisv1alpha1.ExportBindingReference{Path: "root:provider", Name: "widgets"}}}
		for _, e := range endpoints {
			s.Status.APIExportEndpoints = append(s.Status.APIExportEndpoints, apisv1alpha1.APIExportEndpoint{URL: e})
		}
		if valid {
			conditions.MarkTrue(s, apisv1alpha1.APIExportValid)
			conditions.MarkTrue(s, apisv1alpha1.PartitionValid)
			conditions.MarkTrue(s, apisv1alpha1.APIExportEndpointSliceURLsReady)
		} else {
			conditions.MarkFalse(s, apisv1alpha1.APIExportValid, apisv1alpha1.APIExportNotFoundReason, "Error", "APIExport widgets not found")
		}
		return s
	}
	tests := []struct {
		name          string
		slice         *apisv1alpha1.APIExportEndpointSlice
		resolves      bool
		exists, bound bool
		wantWrite     bool
		wantEndpoints int
		wantValid     bool
		wantRequeue   time.Duration
	}{
		{name: "bound export: endpoint", slice: slice(false), resolves: true, exists: true, bound: true,
			wantWrite: true, wantEndpoints: 1, wantValid: true},
		{name: "nobody binds: no endpoint", slice: slice(false), resolves: true, exists: true,
			wantWrite: true, wantValid: true},
		{name: "last consumer gone: endpoint removed", slice: slice(true, url), resolves: true, exists: true,
			wantWrite: true, wantValid: true},
		{name: "up to date: no write", slice: slice(true, url), resolves: true, exists: true, bound: true},
		{name: "export missing: invalid", slice: slice(true), resolves: true, wantWrite: true},
		{name: "workspace unknown, already invalid: retry later", slice: slice(false), wantRequeue: 5 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var written *apisv1alpha1.APIExportEndpointSlice
			r := &endpointsReconciler{
				exportCluster: func(_, path string) string {
					if tt.resolves {
						return "provider"
					}
					return ""
				},
				exportExists: func(context.Context, string, string) bool { return tt.exists },
				bound:        func(string, string) bool { return tt.bound },
				updateStatus: func(_ context.Context, _ string, s *apisv1alpha1.APIExportEndpointSlice) error {
					written = s
					return nil
				},
				externalURL: "https://example",
			}
			requeue, err := r.reconcile(context.Background(), "consumer", tt.slice)
			if err != nil {
				t.Fatalf("reconcile: %v", err)
			}
			if requeue != tt.wantRequeue {
				t.Errorf("requeue = %v, want %v", requeue, tt.wantRequeue)
			}
			if (written != nil) != tt.wantWrite {
				t.Fatalf("status written = %v, want %v", written != nil, tt.wantWrite)
			}
			if written == nil {
				return
			}
			if len(written.Status.APIExportEndpoints) != tt.wantEndpoints ||
				(tt.wantEndpoints == 1 && written.Status.APIExportEndpoints[0].URL != url) {
				t.Errorf("endpoints = %v, want %d (%s)", written.Status.APIExportEndpoints, tt.wantEndpoints, url)
			}
			if got := conditions.IsTrue(written, apisv1alpha1.APIExportValid); got != tt.wantValid {
				t.Errorf("APIExportValid = %v, want %v", got, tt.wantValid)
			}
		})
	}
}

// TestEndpointsReconcilerMissingPartition checks kcp's answer to a slice
// naming a Partition that does not exist: no endpoints, PartitionValid
// False with reason PartitionInvalidReference.
func TestEndpointsReconcilerMissingPartition(t *testing.T) {
	var written *apisv1alpha1.APIExportEndpointSlice
	r := &endpointsReconciler{
		exportCluster: func(_, _ string) string { return "provider" },
		exportExists:  func(context.Context, string, string) bool { return true },
		bound:         func(string, string) bool { return true },
		updateStatus: func(_ context.Context, _ string, s *apisv1alpha1.APIExportEndpointSlice) error {
			written = s
			return nil
		},
		externalURL: "https://example",
	}
	slice := &apisv1alpha1.APIExportEndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: "widgets"},
		Spec: apisv1alpha1.APIExportEndpointSliceSpec{APIExport: apisv1alpha1.ExportBindingReference{Name: "widgets"}, Partition: "eu"}}
	if _, err := r.reconcile(context.Background(), "provider", slice); err != nil {
		t.Fatal(err)
	}
	if written == nil || len(written.Status.APIExportEndpoints) != 0 ||
		conditions.GetReason(written, apisv1alpha1.PartitionValid) != apisv1alpha1.PartitionInvalidReferenceReason ||
		!conditions.IsTrue(written, apisv1alpha1.APIExportValid) {
		t.Fatalf("status written: %+v; want no endpoints, APIExportValid True, PartitionValid False (PartitionInvalidReference)", written)
	}
}

// TestEndpointsOfSeveralShards: each shard adds and removes only its own
// URL, on its slices and on other shards' slices, and leaves the others'.
func TestEndpointsOfSeveralShards(t *testing.T) {
	const (
		mine  = "https://b.example/services/apiexport/provider/widgets"
		other = "https://root.example/services/apiexport/provider/widgets"
	)
	for _, tt := range []struct {
		name        string
		remote      bool
		bound       bool
		have, want  []string
		wantNoWrite bool
		gone        bool
	}{
		{name: "bound here: added after the other shard's", bound: true, have: []string{other}, want: []string{other, mine}},
		{name: "no consumer here: removed, the other kept", have: []string{mine, other}, want: []string{other}},
		{name: "remote slice, bound here: added", remote: true, bound: true, have: []string{other}, want: []string{other, mine}},
		{name: "remote slice, no consumer: removed", remote: true, have: []string{other, mine}, want: []string{other}},
		{name: "remote slice, up to date: no write", remote: true, bound: true, have: []string{other, mine}, wantNoWrite: true},
		{name: "bound here, listed first: order kept", bound: true, have: []string{mine, other}, want: []string{mine, other}},
		{name: "remote slice, listed first: order kept, no write", remote: true, bound: true, have: []string{mine, other}, wantNoWrite: true},
		{name: "remote slice, export gone: removed", remote: true, bound: true, gone: true, have: []string{mine}, want: nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var written *apisv1alpha1.APIExportEndpointSlice
			r := &endpointsReconciler{
				exportCluster: func(_, _ string) string { return "provider" },
				exportExists:  func(context.Context, string, string) bool { return !tt.gone },
				bound:         func(string, string) bool { return tt.bound },
				updateStatus: func(_ context.Context, _ string, s *apisv1alpha1.APIExportEndpointSlice) error {
					written = s
					return nil
				},
				externalURL: "https://b.example",
			}
			slice := &apisv1alpha1.APIExportEndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: "widgets"},
				Spec: apisv1alpha1.APIExportEndpointSliceSpec{APIExport: apisv1alpha1.ExportBindingReference{Name: "widgets"}}}
			for _, u := range tt.have {
				slice.Status.APIExportEndpoints = append(slice.Status.APIExportEndpoints, apisv1alpha1.APIExportEndpoint{URL: u})
			}
			var err error
			if tt.remote {
				err = r.reconcileOther(context.Background(), "provider", slice)
			} else {
				_, err = r.reconcile(context.Background(), "provider", slice)
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.wantNoWrite {
				if written != nil {
					t.Fatalf("wrote %v, want no write", written.Status.APIExportEndpoints)
				}
				return
			}
			if written == nil {
				t.Fatal("no write")
			}
			var got []string
			for _, e := range written.Status.APIExportEndpoints {
				got = append(got, e.URL)
			}
			if strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Errorf("endpoints = %v, want %v", got, tt.want)
			}
			if tt.remote && len(written.Status.Conditions) != 0 {
				t.Errorf("a remote slice's conditions were written: %v", written.Status.Conditions)
			}
		})
	}
}
