// Package reservedmetadata refuses, as kcp's admission does, requests that
// add, change or remove annotations and labels of kcp's domain (kcp.io and
// its subdomains) that only the system writes, unless they come from a
// privileged group. The keys users may write are listed below.
package reservedmetadata

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authentication/user"

	"github.com/meshplane/meshplane/core/internal/tenancy"
)

// privilegedGroups may write every key: the system's own credentials.
var privilegedGroups = map[string]bool{
	user.SystemPrivilegedGroup:                  true,
	"system:kcp:logical-cluster-admin":          true,
	"system:kcp:external-logical-cluster-admin": true,
	"system:kcp:workspace-bootstrapper":         true,
}

// allowed are the kcp keys users write: exact keys, or prefixes when they
// end in "/".
var (
	allowedAnnotations = []string{
		tenancyv1alpha1.ExperimentalWorkspaceOwnerAnnotationKey,
		tenancyv1alpha1.ExperimentalWorkspaceMountAnnotationKey,
		// Users mark their mount objects (kcp's docs); the core tells mount
		// servers which mount a request is for (mounts.MountClusterHeader).
		"experimental.tenancy.kcp.io/is-mount",
		tenancyv1alpha1.ExperimentalDefaultAPIBindingLifecycleAnnotationKey,
		"authorization.kcp.io/required-groups",
		// Written by the storage layer whatever the request says.
		"kcp.io/path", "kcp.io/cluster", "kcp.io/shard", "kcp.io/original-api-version",
		"core.kcp.io/max-total-objects", "core.kcp.io/inactive",
		"experimental.quota.kcp.io/cluster-scoped",
		"extra.apis.kcp.io/",
		"apiexports.apis.kcp.io/skip-endpointslice",
		// v1alpha1 <-> v1alpha2 round-trip annotations of apis.kcp.io.
		"apis.v1alpha2.kcp.io/",
	}
	allowedLabels = []string{
		"claimed.internal.apis.kcp.io/",
		"internal.apis.kcp.io/export",
		// kcp's e2e tests label objects with these.
		"internal.kcp.io/e2e-test", "internal.kcp.io/test-initializer",
	}
)

// Plugin is the admission plugin.
type Plugin struct {
	*admission.Handler
}

var _ admission.ValidationInterface = &Plugin{}

// New returns the plugin.
func New() *Plugin {
	return &Plugin{Handler: admission.NewHandler(admission.Create, admission.Update)}
}

// Validate implements admission.ValidationInterface.
func (p *Plugin) Validate(ctx context.Context, a admission.Attributes, o admission.ObjectInterfaces) error {
	if a.GetObject() == nil {
		return nil
	}
	if u := a.GetUserInfo(); u != nil {
		for _, g := range u.GetGroups() {
			if privilegedGroups[g] {
				return nil
			}
		}
	}
	obj, err := meta.Accessor(a.GetObject())
	if err != nil {
		return nil // no metadata
	}
	var oldAnnotations, oldLabels map[string]string
	if a.GetOldObject() != nil {
		if old, err := meta.Accessor(a.GetOldObject()); err == nil {
			oldAnnotations, oldLabels = old.GetAnnotations(), old.GetLabels()
		}
	}
	if key, ok := reservedChange(obj.GetAnnotations(), oldAnnotations, allowedAnnotations); ok {
		return admission.NewForbidden(a, fmt.Errorf("modification of reserved annotation: %q", key))
	}
	labels := obj.GetLabels()
	if lc, ok := a.GetObject().(*corev1alpha1.LogicalCluster); ok && initializerLabelsInStep(lc) {
		// The labels the logicalcluster admission derived from the
		// remaining initializers (whose change it checks): the system's.
		labels, oldLabels = withoutLifecycleLabels(labels), withoutLifecycleLabels(oldLabels)
	}
	if key, ok := reservedChange(labels, oldLabels, allowedLabels); ok {
		return admission.NewForbidden(a, fmt.Errorf("modification of reserved label: %q", key))
	}
	return nil
}

// initializerLabelsInStep reports whether a live LogicalCluster's
// lifecycle labels are exactly those of its remaining initializers.
func initializerLabelsInStep(lc *corev1alpha1.LogicalCluster) bool {
	if lc.DeletionTimestamp != nil {
		return false
	}
	want := tenancy.LifecycleLabels(lc.Status.Initializers, nil)
	n := 0
	for k, v := range lc.Labels {
		if tenancy.IsLifecycleLabel(k) {
			if w, ok := want[k]; !ok || w != v {
				return false
			}
			n++
		}
	}
	return n == len(want)
}

func withoutLifecycleLabels(labels map[string]string) map[string]string {
	out := make(map[string]string, len(labels))
	for k, v := range labels {
		if !tenancy.IsLifecycleLabel(k) {
			out[k] = v
		}
	}
	return out
}

// reservedChange returns the first (sorted) reserved key that was added,
// removed or changed.
func reservedChange(now, old map[string]string, allowed []string) (string, bool) {
	var changed []string
	for k, v := range now {
		if ov, ok := old[k]; (!ok || ov != v) && Reserved(k, allowed) {
			changed = append(changed, k)
		}
	}
	for k := range old {
		if _, ok := now[k]; !ok && Reserved(k, allowed) {
			changed = append(changed, k)
		}
	}
	if len(changed) == 0 {
		return "", false
	}
	sort.Strings(changed)
	return changed[0], true
}

// Reserved tells whether a key of kcp's domain is reserved to the system,
// given the keys users may write.
func Reserved(key string, allowed []string) bool {
	domain, _, _ := strings.Cut(key, "/")
	if domain != "kcp.io" && !strings.HasSuffix(domain, ".kcp.io") {
		return false
	}
	for _, a := range allowed {
		if key == a || (strings.HasSuffix(a, "/") && strings.HasPrefix(key, a)) {
			return false
		}
	}
	return true
}
