package lifecycle

import (
	"context"
	"net/http"
	"testing"

	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

func TestWriteNotSupported(t *testing.T) {
	const lcs = "/clusters/abc/apis/core.kcp.io/v1alpha1/logicalclusters"
	for _, tc := range []struct {
		method, path string
		want         bool
	}{
		{http.MethodGet, lcs + "/cluster", false},
		{http.MethodGet, lcs, false},
		{http.MethodPatch, lcs + "/cluster", true},
		{http.MethodPut, lcs + "/cluster", true},
		{http.MethodDelete, lcs + "/cluster", true},
		{http.MethodPost, lcs, true},
		{http.MethodDelete, lcs, true},
		{http.MethodPatch, lcs + "/cluster/status", false},
		{http.MethodPut, lcs + "/cluster/status", false},
		{http.MethodDelete, lcs + "/cluster/status", true},
		{http.MethodPatch, "/clusters/abc/api/v1/namespaces/default/configmaps/x", false},
		{http.MethodPatch, "/clusters/abc/apis/core.kcp.io/v1alpha1/logicalclustersx/y", false},
	} {
		if _, got := writeNotSupported(tc.method, tc.path); got != tc.want {
			t.Errorf("%s %s: not supported %v, want %v", tc.method, tc.path, got, tc.want)
		}
	}
}

func TestValidateRelease(t *testing.T) {
	terms := func(ts ...corev1alpha1.LogicalClusterTerminator) *corev1alpha1.LogicalCluster {
		return &corev1alpha1.LogicalCluster{Status: corev1alpha1.LogicalClusterStatus{Terminators: ts}}
	}
	inits := func(is ...corev1alpha1.LogicalClusterInitializer) *corev1alpha1.LogicalCluster {
		return &corev1alpha1.LogicalCluster{Status: corev1alpha1.LogicalClusterStatus{Initializers: is}}
	}
	asTerminator := context.WithValue(context.Background(), contextKey{}, Target{Kind: Terminating, ID: "root:a"})
	asInitializer := context.WithValue(context.Background(), contextKey{}, Target{Kind: Initializing, ID: "root:a"})
	for _, tc := range []struct {
		what     string
		ctx      context.Context
		old, new *corev1alpha1.LogicalCluster
		ok       bool
	}{
		{"terminator removes itself", asTerminator, terms("root:a", "root:b"), terms("root:b"), true},
		{"terminator leaves them (conditions only)", asTerminator, terms("root:a", "root:b"), terms("root:a", "root:b"), true},
		{"terminator removes another", asTerminator, terms("root:a", "root:b"), terms("root:a"), false},
		{"terminator removes all", asTerminator, terms("root:a", "root:b"), terms(), false},
		{"terminator swaps another in", asTerminator, terms("root:a", "root:b"), terms("root:c"), false},
		{"initializer removes itself", asInitializer, inits("root:a", "root:b"), inits("root:b"), true},
		{"initializer removes another", asInitializer, inits("root:a", "root:b"), inits("root:a"), false},
		{"not through a virtual workspace", context.Background(), terms("root:a", "root:b"), terms(), true},
	} {
		err := ValidateRelease(tc.ctx, tc.old, tc.new)
		if (err == nil) != tc.ok || (err != nil && !apierrors.IsInvalid(err)) {
			t.Errorf("%s: %v, want ok %v (else Invalid)", tc.what, err, tc.ok)
		}
	}
}
