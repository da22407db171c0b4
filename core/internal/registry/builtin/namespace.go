package builtin

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/names"

	builtinapi "github.com/meshplane/meshplane/core/internal/apis/builtin"
)

// nsStrategy keeps spec.finalizers and status out of reach of plain
// updates; they change through /finalize and /status, as in kube.
type nsStrategy struct {
	*strategy
	subresource string // "", "status" or "finalize"
}

func (s *nsStrategy) PrepareForCreate(ctx context.Context, obj runtime.Object) {
	ns := obj.(*corev1.Namespace)
	ns.Status = corev1.NamespaceStatus{Phase: corev1.NamespaceActive}
	if !hasFinalizer(ns.Spec.Finalizers, corev1.FinalizerKubernetes) {
		ns.Spec.Finalizers = append(ns.Spec.Finalizers, corev1.FinalizerKubernetes)
	}
	setNameLabel(ns)
}

func (s *nsStrategy) PrepareForUpdate(ctx context.Context, obj, old runtime.Object) {
	ns, oldNS := obj.(*corev1.Namespace), old.(*corev1.Namespace)
	switch s.subresource {
	case "status":
		ns.Spec = oldNS.Spec
	case "finalize":
		ns.Status = oldNS.Status
	default:
		ns.Spec.Finalizers = oldNS.Spec.Finalizers
		ns.Status = oldNS.Status
	}
	setNameLabel(ns)
}

func (s *nsStrategy) Validate(ctx context.Context, obj runtime.Object) field.ErrorList {
	errs := s.strategy.Validate(ctx, obj)
	for i, f := range obj.(*corev1.Namespace).Spec.Finalizers {
		errs = append(errs, apivalidation.ValidateFinalizerName(string(f), field.NewPath("spec", "finalizers").Index(i))...)
	}
	return errs
}

func (s *nsStrategy) ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	return append(s.strategy.ValidateUpdate(ctx, obj, old), s.Validate(ctx, obj)...)
}

func setNameLabel(ns *corev1.Namespace) {
	if ns.Labels == nil {
		ns.Labels = map[string]string{}
	}
	ns.Labels[corev1.LabelMetadataName] = ns.Name
}

func hasFinalizer(fs []corev1.FinalizerName, f corev1.FinalizerName) bool {
	for _, x := range fs {
		if x == f {
			return true
		}
	}
	return false
}

func newNamespaceStorage(opts generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
	base := &strategy{
		ObjectTyper:   builtinapi.Scheme,
		NameGenerator: names.SimpleNameGenerator,
		nameFn:        apivalidation.ValidateNamespaceName,
		apiVersion:    "v1",
	}
	main := &nsStrategy{strategy: base}
	store := &genericregistry.Store{
		NewFunc:                   func() runtime.Object { return &corev1.Namespace{} },
		NewListFunc:               func() runtime.Object { return &corev1.NamespaceList{} },
		DefaultQualifiedResource:  corev1.Resource("namespaces"),
		SingularQualifiedResource: corev1.Resource("namespace"),
		CreateStrategy:            main,
		UpdateStrategy:            main,
		DeleteStrategy:            main,
		ResetFieldsStrategy:       base,
		TableConvertor: table{columns: []column{{"Status", "string", func(o runtime.Object) any {
			return string(o.(*corev1.Namespace).Status.Phase)
		}}}},
	}
	// A namespace whose content is still being deleted stays, even when
	// an update (the garbage collector's) removes its last metadata
	// finalizer, as in kube.
	store.ShouldDeleteDuringUpdate = func(ctx context.Context, key string, obj, existing runtime.Object) bool {
		if ns, ok := obj.(*corev1.Namespace); ok && len(ns.Spec.Finalizers) > 0 {
			return false
		}
		return genericregistry.ShouldDeleteDuringUpdate(ctx, key, obj, existing)
	}
	attrs := getAttrs(func(obj runtime.Object) fields.Set {
		return fields.Set{"status.phase": string(obj.(*corev1.Namespace).Status.Phase)}
	})
	if err := store.CompleteWithOptions(&generic.StoreOptions{RESTOptions: opts, AttrFunc: attrs}); err != nil {
		return nil, fmt.Errorf("registry for namespaces: %w", err)
	}
	sub := func(name string) *statusREST {
		c := *store
		c.UpdateStrategy = &nsStrategy{strategy: base, subresource: name}
		return &statusREST{store: &c}
	}
	return map[string]rest.Storage{
		"namespaces":          &namespaceREST{named: &named{Store: store, shortNames: []string{"ns"}}},
		"namespaces/status":   sub("status"),
		"namespaces/finalize": sub("finalize"),
	}, nil
}

// namespaceREST deletes in two steps as kube does: while spec.finalizers
// remain, a delete only marks the namespace Terminating; the namespace
// controller empties it, removes its finalizer and deletes again.
type namespaceREST struct {
	*named
}

func (r *namespaceREST) Delete(ctx context.Context, name string, deleteValidation rest.ValidateObjectFunc, options *metav1.DeleteOptions) (runtime.Object, bool, error) {
	obj, err := r.Store.Get(ctx, name, &metav1.GetOptions{})
	if err != nil {
		return nil, false, err
	}
	ns := obj.(*corev1.Namespace)
	if options == nil {
		options = metav1.NewDeleteOptions(0)
	}
	if p := options.Preconditions; p != nil {
		if p.UID != nil && *p.UID != ns.UID {
			return nil, false, apierrors.NewConflict(corev1.Resource("namespaces"), name,
				fmt.Errorf("precondition failed: UID in precondition: %v, UID in object meta: %v", *p.UID, ns.UID))
		}
		if p.ResourceVersion != nil && *p.ResourceVersion != ns.ResourceVersion {
			return nil, false, apierrors.NewConflict(corev1.Resource("namespaces"), name,
				fmt.Errorf("precondition failed: ResourceVersion in precondition: %v, ResourceVersion in object meta: %v", *p.ResourceVersion, ns.ResourceVersion))
		}
	}
	if len(ns.Spec.Finalizers) == 0 && len(ns.Finalizers) == 0 {
		return r.Store.Delete(ctx, name, deleteValidation, options)
	}
	if ns.DeletionTimestamp != nil && ns.Status.Phase == corev1.NamespaceTerminating {
		return ns, false, nil
	}
	if err := deleteValidation(ctx, ns); err != nil {
		return nil, false, err
	}
	key, err := r.Store.KeyFunc(ctx, name)
	if err != nil {
		return nil, false, err
	}
	out := &corev1.Namespace{}
	dryRun := len(options.DryRun) > 0
	err = r.Store.Storage.GuaranteedUpdate(ctx, key, out, false, &storage.Preconditions{UID: &ns.UID},
		storage.SimpleUpdate(func(existing runtime.Object) (runtime.Object, error) {
			cur := existing.(*corev1.Namespace)
			if cur.DeletionTimestamp == nil {
				now := metav1.Now()
				cur.DeletionTimestamp = &now
				zero := int64(0)
				cur.DeletionGracePeriodSeconds = &zero
			}
			cur.Status.Phase = corev1.NamespaceTerminating
			cur.Finalizers = gcFinalizers(cur.Finalizers, options)
			return cur, nil
		}), dryRun, nil)
	if err != nil {
		return nil, false, err
	}
	return out, false, nil
}

// gcFinalizers sets the garbage collector's finalizers of a namespace
// being deleted as the delete's propagation policy asks (orphan or
// foregroundDeletion); without a policy they stay as they are.
func gcFinalizers(finalizers []string, options *metav1.DeleteOptions) []string {
	var policy metav1.DeletionPropagation
	switch {
	case options.OrphanDependents != nil && *options.OrphanDependents:
		policy = metav1.DeletePropagationOrphan
	case options.OrphanDependents != nil:
		policy = metav1.DeletePropagationBackground
	case options.PropagationPolicy != nil:
		policy = *options.PropagationPolicy
	default:
		return finalizers
	}
	out := slices.DeleteFunc(slices.Clone(finalizers), func(f string) bool {
		return f == metav1.FinalizerOrphanDependents || f == metav1.FinalizerDeleteDependents
	})
	switch policy {
	case metav1.DeletePropagationOrphan:
		out = append(out, metav1.FinalizerOrphanDependents)
	case metav1.DeletePropagationForeground:
		out = append(out, metav1.FinalizerDeleteDependents)
	}
	return out
}
