// Package apiexport gives every APIExport its identity and its default
// endpoint slice, and keeps endpoint slices pointing at the export's
// virtual workspace while any cluster binds the export.
//
// Reconcile steps for an export: identity secret (kcp-system/<name>, key
// "key"), status.identityHash, default APIExportEndpointSlice. For a
// slice: endpoints = [<server>/services/apiexport/<cluster>/<export>] when
// bound, else none.
package apiexport

import (
	"context"
	"strings"
	"time"

	apisv1alpha1 "github.com/kcp-dev/sdk/apis/apis/v1alpha1"
	apisv1alpha2 "github.com/kcp-dev/sdk/apis/apis/v1alpha2"
	"github.com/kcp-dev/sdk/apis/third_party/conditions/util/conditions"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/meshplane/meshplane/core/pkg/apiexport"
	"github.com/meshplane/meshplane/core/pkg/clusters"
	"github.com/meshplane/meshplane/core/pkg/controllers/runner"
	"github.com/meshplane/meshplane/core/pkg/registry/local"
	"github.com/meshplane/meshplane/core/pkg/tenancy"
)

// SkipSliceAnnotation on an export suppresses its default endpoint slice.
const SkipSliceAnnotation = "apiexports.apis.kcp.io/skip-endpointslice"

// Controller reconciles exports and endpoint slices.
type Controller struct {
	Exports     local.Client[*apisv1alpha2.APIExport]
	Slices      local.Client[*apisv1alpha1.APIExportEndpointSlice]
	Secrets     local.Client[*corev1.Secret]
	Namespaces  local.Client[*corev1.Namespace]
	Index       *tenancy.Index
	Consumers   *apiexport.Consumers
	ExternalURL string

	exports, slices *runner.Runner
	sliceInformer   cache.SharedIndexInformer
}

// Run works until ctx is done.
func (c *Controller) Run(ctx context.Context, exportInformer, sliceInformer cache.SharedIndexInformer) {
	c.exports = runner.New("apiexport", 2, c.reconcileExport)
	c.slices = runner.New("apiexportendpointslice", 2, c.reconcileSlice)
	c.sliceInformer = sliceInformer
	_, _ = exportInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(o any) { c.exports.Add(key(o)) }, UpdateFunc: func(_, o any) { c.exports.Add(key(o)) }})
	_, _ = sliceInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(o any) { c.slices.Add(key(o)) }, UpdateFunc: func(_, o any) { c.slices.Add(key(o)) }})
	c.Consumers.OnChange(func(exportCluster, exportName string) { c.enqueueSlicesOf(exportCluster, exportName) })
	go c.exports.Run(ctx)
	c.slices.Run(ctx)
}

func key(o any) string {
	m, err := metaOf(o)
	if err != nil {
		return ""
	}
	return m.GetAnnotations()[clusters.Annotation] + "|" + m.GetName()
}

func (c *Controller) enqueueSlicesOf(exportCluster, exportName string) {
	for _, o := range c.sliceInformer.GetStore().List() {
		s := o.(*apisv1alpha1.APIExportEndpointSlice)
		cluster := s.Annotations[clusters.Annotation]
		if c.exportCluster(cluster, s.Spec.APIExport.Path) == exportCluster && s.Spec.APIExport.Name == exportName {
			c.slices.Add(key(s))
		}
	}
}

// exportCluster resolves an export path as seen from cluster.
func (c *Controller) exportCluster(cluster, path string) string {
	if path == "" {
		return cluster
	}
	if name, ok := c.Index.Resolve(path); ok {
		return name
	}
	return ""
}

func (c *Controller) reconcileExport(ctx context.Context, k string) (time.Duration, error) {
	cluster, name, _ := strings.Cut(k, "|")
	export, err := c.Exports.Get(ctx, cluster, "", name)
	if apierrors.IsNotFound(err) || (err == nil && export.DeletionTimestamp != nil) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	if export.Spec.Identity == nil || export.Spec.Identity.SecretRef == nil {
		if _, err := c.Namespaces.Create(ctx, cluster, "", &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: apiexport.IdentityNamespace}}); err != nil && !apierrors.IsAlreadyExists(err) {
			return 0, err
		}
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: apiexport.IdentityNamespace},
			StringData: map[string]string{"key": apiexport.NewIdentityKey()}}
		if _, err := c.Secrets.Create(ctx, cluster, apiexport.IdentityNamespace, secret); err != nil && !apierrors.IsAlreadyExists(err) {
			return 0, err
		}
		export = export.DeepCopy()
		export.Spec.Identity = &apisv1alpha2.Identity{SecretRef: &corev1.SecretReference{Namespace: apiexport.IdentityNamespace, Name: name}}
		_, err := c.Exports.Update(ctx, cluster, "", name, export)
		return 0, err // the update brings the export back
	}
	ref := export.Spec.Identity.SecretRef
	secret, err := c.Secrets.Get(ctx, cluster, ref.Namespace, ref.Name)
	if err != nil {
		return 0, err
	}
	hash := apiexport.IdentityHash(secret.Data["key"])
	if export.Status.IdentityHash != hash || !conditions.IsTrue(export, apisv1alpha2.APIExportIdentityValid) {
		export = export.DeepCopy()
		export.Status.IdentityHash = hash
		conditions.MarkTrue(export, apisv1alpha2.APIExportIdentityValid)
		if _, err := c.Exports.UpdateStatus(ctx, cluster, "", name, export); err != nil {
			return 0, err
		}
	}
	if export.Annotations[SkipSliceAnnotation] == "" {
		slice := &apisv1alpha1.APIExportEndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: apisv1alpha1.APIExportEndpointSliceSpec{APIExport: apisv1alpha1.ExportBindingReference{Path: c.Index.Path(cluster), Name: name}}}
		if _, err := c.Slices.Create(ctx, cluster, "", slice); err != nil && !apierrors.IsAlreadyExists(err) {
			return 0, err
		}
	}
	return 0, nil
}

func (c *Controller) reconcileSlice(ctx context.Context, k string) (time.Duration, error) {
	cluster, name, _ := strings.Cut(k, "|")
	slice, err := c.Slices.Get(ctx, cluster, "", name)
	if apierrors.IsNotFound(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	exportCluster := c.exportCluster(cluster, slice.Spec.APIExport.Path)
	var endpoints []apisv1alpha1.APIExportEndpoint
	valid := false
	if exportCluster != "" {
		if _, err := c.Exports.Get(ctx, exportCluster, "", slice.Spec.APIExport.Name); err == nil {
			valid = true
			if len(c.Consumers.Of(exportCluster, slice.Spec.APIExport.Name)) > 0 {
				endpoints = []apisv1alpha1.APIExportEndpoint{{URL: c.ExternalURL + "/services/apiexport/" + exportCluster + "/" + slice.Spec.APIExport.Name}}
			}
		}
	}
	want := slice.DeepCopy()
	want.Status.APIExportEndpoints = endpoints
	if valid {
		conditions.MarkTrue(want, apisv1alpha1.APIExportValid)
	} else {
		conditions.MarkFalse(want, apisv1alpha1.APIExportValid, apisv1alpha1.APIExportNotFoundReason, "Error", "APIExport %s not found", slice.Spec.APIExport.Name)
	}
	if equality.Semantic.DeepEqual(want.Status.APIExportEndpoints, slice.Status.APIExportEndpoints) &&
		conditions.IsTrue(slice, apisv1alpha1.APIExportValid) == valid {
		if !valid {
			return 5 * time.Second, nil
		}
		return 0, nil
	}
	_, err = c.Slices.UpdateStatus(ctx, cluster, "", name, want)
	return 0, err
}
