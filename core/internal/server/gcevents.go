package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/rest"

	builtinapi "github.com/meshplane/meshplane/core/internal/apis/builtin"
	"github.com/meshplane/meshplane/core/internal/controllers/garbagecollector"
	"github.com/meshplane/meshplane/core/internal/registry/local"
)

// gcInvalidOwnerEvents writes the garbage collector's
// OwnerRefInvalidNamespace warnings as kube's event recorder would: a
// core/v1 Event on the dependent (in namespace default for a cluster-scoped
// one), from component garbage-collector-controller. The name is fixed
// per dependent and owner, so the same warning is written once.
func (p *parts) gcInvalidOwnerEvents() func(ctx context.Context, cluster string, obj runtime.Object, ref metav1.OwnerReference, message string) error {
	events, _ := p.storage[corev1.SchemeGroupVersion]["events"].(rest.Creater)
	return func(ctx context.Context, cluster string, obj runtime.Object, ref metav1.OwnerReference, message string) error {
		if events == nil {
			return nil
		}
		m, err := meta.Accessor(obj)
		if err != nil {
			return err
		}
		gvk := obj.GetObjectKind().GroupVersionKind()
		if gvk.Empty() {
			if kinds, _, err := builtinapi.Scheme.ObjectKinds(obj); err == nil && len(kinds) > 0 {
				gvk = kinds[0]
			}
		}
		ns := m.GetNamespace()
		if ns == "" {
			ns = metav1.NamespaceDefault
		}
		sum := sha256.Sum256([]byte(string(m.GetUID()) + "/" + string(ref.UID)))
		now := metav1.NewTime(time.Now())
		ev := &corev1.Event{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s.%s", m.GetName(), hex.EncodeToString(sum[:8])), Namespace: ns},
			InvolvedObject: corev1.ObjectReference{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind,
				Namespace: m.GetNamespace(), Name: m.GetName(), UID: m.GetUID(), ResourceVersion: m.GetResourceVersion()},
			Reason: garbagecollector.InvalidOwnerReason, Message: message, Type: corev1.EventTypeWarning,
			Source:         corev1.EventSource{Component: "garbage-collector-controller"},
			FirstTimestamp: now, LastTimestamp: now, Count: 1,
		}
		_, err = events.Create(local.Context(ctx, cluster, ns), ev, rest.ValidateAllObjectFunc, &metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		return err
	}
}
