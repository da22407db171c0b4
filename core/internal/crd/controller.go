package crd

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	apiextensionsinternal "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/meshplane/meshplane/core/internal/clusters"
	"github.com/meshplane/meshplane/core/internal/reconciler/runner"
)

// Controller accepts the names of new CRDs, marks them Established, and
// deletes a CRD's custom resources before the CRD itself goes.
type Controller struct {
	CRDs    rest.StandardStorage
	Status  rest.Updater
	Handler *Handler
	runner  *runner.Runner
}

// NewController returns the controller: crds is the CRD registry, status
// its status subresource, handler serves the custom resources.
func NewController(crds rest.StandardStorage, status rest.Updater, handler *Handler) *Controller {
	return &Controller{CRDs: crds, Status: status, Handler: handler}
}

// Run processes CRD events until ctx is done.
func (c *Controller) Run(ctx context.Context) {
	c.runner = runner.New("crd", 2, func(ctx context.Context, key runner.Key) (time.Duration, error) {
		return 0, c.reconcile(ctx, key.Cluster, key.Name)
	})
	_ = c.runner.EnqueueFrom(c.Handler.Index, runner.ObjectKeys)
	_, _ = c.Handler.Index.AddEventHandler(cache.ResourceEventHandlerFuncs{
		DeleteFunc: func(obj any) {
			if crd, ok := runner.Unwrap(obj).(*apiextensionsinternal.CustomResourceDefinition); ok {
				c.Handler.Forget(crd.UID)
			}
		},
	})
	c.runner.Run(ctx)
}

func (c *Controller) reconcile(ctx context.Context, cluster, name string) error {
	ctx = genericapirequest.WithNamespace(clusters.WithCluster(ctx, cluster), metav1.NamespaceNone)
	obj, err := c.CRDs.Get(ctx, name, &metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	crd := obj.(*apiextensionsinternal.CustomResourceDefinition)
	if crd.DeletionTimestamp != nil {
		return c.cleanup(ctx, crd)
	}
	if apiextensionsinternal.IsCRDConditionTrue(crd, apiextensionsinternal.Established) &&
		crd.Status.AcceptedNames.Plural == crd.Spec.Names.Plural && crd.Status.AcceptedNames.Kind == crd.Spec.Names.Kind &&
		slices.Equal(crd.Status.AcceptedNames.ShortNames, crd.Spec.Names.ShortNames) &&
		slices.Equal(crd.Status.AcceptedNames.Categories, crd.Spec.Names.Categories) {
		return nil
	}
	crd = crd.DeepCopy()
	crd.Status.AcceptedNames = crd.Spec.Names
	if crd.Status.AcceptedNames.Singular == "" {
		crd.Status.AcceptedNames.Singular = strings.ToLower(crd.Spec.Names.Kind)
	}
	if crd.Status.AcceptedNames.ListKind == "" {
		crd.Status.AcceptedNames.ListKind = crd.Spec.Names.Kind + "List"
	}
	now := metav1.Now()
	for _, cond := range []apiextensionsinternal.CustomResourceDefinitionCondition{
		{Type: apiextensionsinternal.NamesAccepted, Status: apiextensionsinternal.ConditionTrue, Reason: "NoConflicts", Message: "no conflicts found", LastTransitionTime: now},
		{Type: apiextensionsinternal.Established, Status: apiextensionsinternal.ConditionTrue, Reason: "InitialNamesAccepted", Message: "the initial names have been accepted", LastTransitionTime: now},
	} {
		apiextensionsinternal.SetCRDCondition(crd, cond)
	}
	stored := []string{}
	for _, v := range crd.Spec.Versions {
		if v.Storage {
			stored = append(stored, v.Name)
		}
	}
	for _, v := range stored {
		if !slices.Contains(crd.Status.StoredVersions, v) {
			crd.Status.StoredVersions = append(crd.Status.StoredVersions, v)
		}
	}
	_, _, err = c.Status.Update(ctx, crd.Name, rest.DefaultUpdatedObjectInfo(crd), rest.ValidateAllObjectFunc,
		rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
	return err
}

// cleanup deletes every custom resource of a CRD being deleted, then lets
// the CRD go by removing its finalizer.
func (c *Controller) cleanup(ctx context.Context, crd *apiextensionsinternal.CustomResourceDefinition) error {
	if !apiextensionsinternal.CRDHasFinalizer(crd, apiextensionsinternal.CustomResourceCleanupFinalizer) {
		return nil
	}
	if v1 := c.Handler.Index.Get(crd.Annotations[clusters.Annotation], crd.Name); v1 != nil && crd.Status.AcceptedNames.Plural != "" {
		si, err := c.Handler.servingInfo(v1)
		if err != nil {
			return fmt.Errorf("serving info for cleanup: %w", err)
		}
		for _, st := range si.storage {
			if err := deleteAll(ctx, st.CustomResource); err != nil {
				return fmt.Errorf("deleting custom resources: %w", err)
			}
			break // every version shares one storage
		}
	}
	crd = crd.DeepCopy()
	apiextensionsinternal.CRDRemoveFinalizer(crd, apiextensionsinternal.CustomResourceCleanupFinalizer)
	_, _, err := c.CRDs.Update(ctx, crd.Name, rest.DefaultUpdatedObjectInfo(crd), rest.ValidateAllObjectFunc,
		rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// deleteAll deletes every object of a custom resource in the cluster of
// ctx, namespace by namespace (a registry deletes within one namespace).
func deleteAll(ctx context.Context, st interface {
	rest.Lister
	rest.CollectionDeleter
}) error {
	list, err := st.List(genericapirequest.WithNamespace(ctx, metav1.NamespaceAll), &metainternalversion.ListOptions{})
	if err != nil {
		return err
	}
	namespaces := map[string]bool{}
	if err := meta.EachListItem(list, func(obj runtime.Object) error {
		m, err := meta.Accessor(obj)
		if err == nil {
			namespaces[m.GetNamespace()] = true
		}
		return err
	}); err != nil {
		return err
	}
	for ns := range namespaces {
		if _, err := st.DeleteCollection(genericapirequest.WithNamespace(ctx, ns), rest.ValidateAllObjectFunc,
			&metav1.DeleteOptions{}, &metainternalversion.ListOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	// Objects with finalizers are only marked deleted: as Kubernetes and kcp
	// do, the caller (CRD or APIBinding) waits until their controllers let
	// them go, so those controllers can still reach them.
	if len(namespaces) == 0 {
		return nil
	}
	list, err = st.List(genericapirequest.WithNamespace(ctx, metav1.NamespaceAll), &metainternalversion.ListOptions{})
	if err != nil {
		return err
	}
	if n := meta.LenList(list); n > 0 {
		return fmt.Errorf("%w: %d", ErrObjectsRemain, n)
	}
	return nil
}

// ErrObjectsRemain: deleted objects are still held by finalizers; try
// again later.
var ErrObjectsRemain = errors.New("objects deleted but still held by finalizers")
