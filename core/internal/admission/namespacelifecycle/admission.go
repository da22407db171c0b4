// Package namespacelifecycle refuses new objects in a namespace that does
// not exist or is being terminated, inside the request's logical cluster,
// with the errors kube-apiserver gives.
package namespacelifecycle

import (
	"context"
	"fmt"
	"io"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apiserver/pkg/admission"
)

// GetNamespace reads a namespace of the cluster carried by ctx.
type GetNamespace func(ctx context.Context, name string) (*corev1.Namespace, error)

// Plugin is the admission plugin.
type Plugin struct {
	*admission.Handler
	get GetNamespace
}

var _ admission.ValidationInterface = &Plugin{}

// New returns the plugin.
func New(get GetNamespace) *Plugin {
	return &Plugin{Handler: admission.NewHandler(admission.Create), get: get}
}

// Register adds the plugin to plugins under the name NamespaceLifecycle.
func Register(plugins *admission.Plugins, get GetNamespace) {
	plugins.Register("NamespaceLifecycle", func(io.Reader) (admission.Interface, error) { return New(get), nil })
}

// Validate implements admission.ValidationInterface.
func (p *Plugin) Validate(ctx context.Context, a admission.Attributes, o admission.ObjectInterfaces) error {
	if a.GetNamespace() == "" || a.GetKind().GroupKind() == corev1.SchemeGroupVersion.WithKind("Namespace").GroupKind() {
		return nil
	}
	if a.GetResource().Group == authorizationv1.GroupName {
		return nil // access reviews are not stored
	}
	ns, err := p.get(ctx, a.GetNamespace())
	if apierrors.IsNotFound(err) {
		return apierrors.NewNotFound(corev1.Resource("namespaces"), a.GetNamespace())
	}
	if err != nil {
		return apierrors.NewInternalError(fmt.Errorf("reading namespace %s: %w", a.GetNamespace(), err))
	}
	if ns.Status.Phase == corev1.NamespaceTerminating || ns.DeletionTimestamp != nil {
		err := admission.NewForbidden(a, fmt.Errorf("unable to create new content in namespace %s because it is being terminated", a.GetNamespace()))
		if se, ok := err.(*apierrors.StatusError); ok {
			se.ErrStatus.Details.Causes = append(se.ErrStatus.Details.Causes, metav1StatusCause())
		}
		return err
	}
	return nil
}
