// Package namespacelifecycle refuses new objects in a namespace that does
// not exist or is being terminated, inside the request's logical cluster,
// and the deletion of the namespaces Kubernetes keeps (default,
// kube-system, kube-public) while the cluster itself is not being deleted,
// with the errors kube-apiserver gives.
package namespacelifecycle

import (
	"context"
	"fmt"
	"io"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/admission"
)

// GetNamespace reads a namespace of the cluster carried by ctx.
type GetNamespace func(ctx context.Context, name string) (*corev1.Namespace, error)

// ClusterDeleting tells whether the logical cluster carried by ctx is
// being deleted.
type ClusterDeleting func(ctx context.Context) bool

// Plugin is the admission plugin.
type Plugin struct {
	*admission.Handler
	get GetNamespace
	// Deleting, when set, lets the kept namespaces of a cluster being
	// deleted go (a terminator may delete them, as in kcp).
	Deleting ClusterDeleting
}

// immortal are the namespaces that may not be deleted, as in Kubernetes
// and kcp.
var immortal = map[string]bool{metav1.NamespaceDefault: true, metav1.NamespaceSystem: true, metav1.NamespacePublic: true}

var _ admission.ValidationInterface = &Plugin{}

// New returns the plugin.
func New(get GetNamespace) *Plugin {
	return &Plugin{Handler: admission.NewHandler(admission.Create, admission.Delete), get: get}
}

// Register adds the plugin to plugins under the name NamespaceLifecycle.
func Register(plugins *admission.Plugins, get GetNamespace) {
	plugins.Register("NamespaceLifecycle", func(io.Reader) (admission.Interface, error) { return New(get), nil })
}

// Validate implements admission.ValidationInterface.
func (p *Plugin) Validate(ctx context.Context, a admission.Attributes, o admission.ObjectInterfaces) error {
	isNamespace := a.GetKind().GroupKind() == corev1.SchemeGroupVersion.WithKind("Namespace").GroupKind() ||
		(a.GetKind().Empty() && a.GetResource().GroupResource() == corev1.Resource("namespaces"))
	if a.GetOperation() == admission.Delete {
		if isNamespace && a.GetSubresource() == "" && immortal[a.GetName()] && (p.Deleting == nil || !p.Deleting(ctx)) {
			return apierrors.NewForbidden(a.GetResource().GroupResource(), a.GetName(), fmt.Errorf("this namespace may not be deleted"))
		}
		return nil
	}
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
