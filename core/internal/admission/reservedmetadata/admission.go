// Package reservedmetadata refuses, as kcp's admission does, requests that
// add, change or remove annotations and labels of kcp's domain (kcp.io and
// its subdomains) that only the system writes, unless they come from a
// system identity (authorization/privileged: the system's own
// credentials, not impersonated). The keys users may write are listed
// below; every other key of kcp's domain is the system's (docs/security.md
// lists them and who writes each).
//
// Keys of Meshplane's scheduling domain (scheduling.meshplane.io: a
// WorkspaceType's shard-selector, a Shard's weight) are the system's too:
// the platform decides which shards a type's workspaces land on; a
// tenant who may write WorkspaceTypes in its own workspace may not.
//
// kcp.io/path, the workspace path of an object's logical cluster, is read
// by the path index, the front proxy, the operators and the providers: on
// a LogicalCluster only the system writes it; on any other object it is
// replaced by the true path of the object's cluster (kcp's pathannotation
// admission), and refused if a later mutation changes it again.
package reservedmetadata

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apiserver/pkg/admission"

	"github.com/meshplane/meshplane/core/internal/authorization/privileged"
	"github.com/meshplane/meshplane/core/internal/clusters"
	"github.com/meshplane/meshplane/core/internal/tenancy"
)

// allowed are the kcp keys users write: exact keys, or prefixes when they
// end in "/".
var (
	allowedAnnotations = []string{
		// Replaced by the creator on create; the workspace admission
		// refuses a user's change on update.
		tenancyv1alpha1.ExperimentalWorkspaceOwnerAnnotationKey,
		tenancyv1alpha1.ExperimentalWorkspaceMountAnnotationKey,
		// Users mark their mount objects (kcp's docs); the core tells mount
		// servers which mount a request is for (mounts.MountClusterHeader).
		"experimental.tenancy.kcp.io/is-mount",
		tenancyv1alpha1.ExperimentalDefaultAPIBindingLifecycleAnnotationKey,
		// Stamped by the storage layer with the object's own cluster on
		// every write, whatever the request says.
		"kcp.io/cluster",
		"experimental.quota.kcp.io/cluster-scoped",
		"extra.apis.kcp.io/",
		"apiexports.apis.kcp.io/skip-endpointslice",
		// v1alpha1 <-> v1alpha2 round-trip annotations of apis.kcp.io.
		"apis.v1alpha2.kcp.io/",
	}
	// On objects other than LogicalClusters, kcp.io/path is checked
	// against the object's workspace instead (Admit, Validate).
	// authorization.kcp.io/required-groups: on a LogicalCluster, where it
	// is enforced, the system's only (kcp lets the workspace's admin drop
	// it there); on a Workspace the workspace admission decides.
	allowedAnnotationsBesidesLogicalClusters = append(allowedAnnotations[:len(allowedAnnotations):len(allowedAnnotations)], tenancy.PathAnnotation,
		tenancy.RequiredGroupsAnnotation)

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
	// Path returns the workspace path of a logical cluster (the cluster's
	// name when it has none).
	Path func(cluster string) string
}

var (
	_ admission.ValidationInterface = &Plugin{}
	_ admission.MutationInterface   = &Plugin{}
)

// New returns the plugin.
func New(path func(cluster string) string) *Plugin {
	return &Plugin{Handler: admission.NewHandler(admission.Create, admission.Update), Path: path}
}

// Admit implements admission.MutationInterface: a user's kcp.io/path on
// an object other than a LogicalCluster becomes the true path of the
// object's cluster.
func (p *Plugin) Admit(ctx context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	obj, want, ok := p.pathOf(ctx, a)
	if !ok || obj.GetAnnotations()[tenancy.PathAnnotation] == want {
		return nil
	}
	annotations := obj.GetAnnotations()
	annotations[tenancy.PathAnnotation] = want
	obj.SetAnnotations(annotations)
	return nil
}

// pathOf returns the object of a user's write carrying kcp.io/path and
// the path the annotation must hold; ok is false when there is nothing
// to check.
func (p *Plugin) pathOf(ctx context.Context, a admission.Attributes) (metav1Object, string, bool) {
	if a.GetObject() == nil || p.Path == nil {
		return nil, "", false
	}
	obj, err := meta.Accessor(a.GetObject())
	if err != nil {
		return nil, "", false
	}
	if _, ok := obj.GetAnnotations()[tenancy.PathAnnotation]; !ok || isLogicalCluster(a) || privileged.System(ctx, a.GetUserInfo()) {
		return nil, "", false
	}
	cluster, ok := clusters.From(ctx)
	if !ok || cluster == clusters.Wildcard {
		return nil, "", false
	}
	return obj, p.Path(cluster), true
}

type metav1Object = interface {
	GetAnnotations() map[string]string
	SetAnnotations(map[string]string)
}

func isLogicalCluster(a admission.Attributes) bool {
	return a.GetResource().GroupResource() == corev1alpha1.Resource("logicalclusters")
}

// Validate implements admission.ValidationInterface.
func (p *Plugin) Validate(ctx context.Context, a admission.Attributes, o admission.ObjectInterfaces) error {
	if a.GetObject() == nil || privileged.System(ctx, a.GetUserInfo()) {
		return nil
	}
	if obj, want, ok := p.pathOf(ctx, a); ok && obj.GetAnnotations()[tenancy.PathAnnotation] != want {
		return admission.NewForbidden(a, fmt.Errorf("annotation %s must be the path of this workspace, %q", tenancy.PathAnnotation, want))
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
	allowed := allowedAnnotations
	if !isLogicalCluster(a) {
		allowed = allowedAnnotationsBesidesLogicalClusters
	}
	if key, ok := reservedChange(obj.GetAnnotations(), oldAnnotations, allowed); ok {
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
// lifecycle labels are exactly those of its remaining initializers and its
// terminators.
func initializerLabelsInStep(lc *corev1alpha1.LogicalCluster) bool {
	if lc.DeletionTimestamp != nil {
		return false
	}
	want := tenancy.LifecycleLabels(lc.Status.Initializers, lc.Status.Terminators)
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

// SystemDomains are domains of Meshplane whose keys only the system
// writes, whatever the object.
var SystemDomains = []string{"scheduling.meshplane.io"}

// Reserved tells whether a key of kcp's domain is reserved to the system,
// given the keys users may write, or the key is of one of SystemDomains.
func Reserved(key string, allowed []string) bool {
	domain, _, _ := strings.Cut(key, "/")
	if slices.Contains(SystemDomains, domain) {
		return true
	}
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
