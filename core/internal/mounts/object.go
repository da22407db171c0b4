// Package mounts serves workspaces that are mounts of an API served
// elsewhere (kcp's WorkspaceMounts): a Workspace whose spec.mount.ref names
// an object (any kind, in the Workspace's own cluster) that carries the
// experimental.tenancy.kcp.io/is-mount annotation and says in status.URL
// and status.phase where the mounted API lives and whether it is Ready.
//
// The package holds what the controller and the handler chain share: how a
// mount object is read (object.go), the index of mounted workspaces
// (workspaces.go), the watches on mount objects (objects.go), the proxy
// (proxy.go), the authorizer that decides in the parent workspace
// (authorizer.go) and the transport to mount servers (transport.go).
package mounts

import (
	"fmt"

	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Gate is the feature gate that turns mounts on (on by default here; off
// in kcp).
const Gate = "WorkspaceMounts"

// IsMountAnnotation marks an object that may be mounted; its value must
// be "true".
const IsMountAnnotation = "experimental.tenancy.kcp.io/is-mount"

// ObjectKey names one mount object: the cluster it lives in, its group
// and kind, namespace and name.
type ObjectKey struct {
	Cluster, Group, Kind, Namespace, Name string
}

// KeyOf is the key of the object ref names in cluster.
func KeyOf(cluster string, ref tenancyv1alpha1.ObjectReference) ObjectKey {
	gv, _ := schema.ParseGroupVersion(ref.APIVersion)
	return ObjectKey{Cluster: cluster, Group: gv.Group, Kind: ref.Kind, Namespace: ref.Namespace, Name: ref.Name}
}

func (k ObjectKey) String() string {
	gk := schema.GroupKind{Group: k.Group, Kind: k.Kind}.String()
	if k.Namespace == "" {
		return fmt.Sprintf("%s %s|%s", gk, k.Cluster, k.Name)
	}
	return fmt.Sprintf("%s %s|%s/%s", gk, k.Cluster, k.Namespace, k.Name)
}

// State is what the core knows of a mount: where it is served, its phase,
// and, when it is not Ready, why (Reason is one of kcp's Mount*Reason
// constants).
type State struct {
	URL     string
	Phase   tenancyv1alpha1.MountPhaseType
	Reason  string
	Message string
}

// Ready reports whether requests may be proxied.
func (s State) Ready() bool {
	return s.Reason == "" && s.Phase == tenancyv1alpha1.MountPhaseReady && s.URL != ""
}

// NotFound is the state of a reference to no object.
func NotFound(ref tenancyv1alpha1.ObjectReference, why string) State {
	msg := fmt.Sprintf("%s %q not found", ref.Kind, name(ref.Namespace, ref.Name))
	if why != "" {
		msg += ": " + why
	}
	return State{Phase: tenancyv1alpha1.MountPhaseUnknown, Reason: tenancyv1alpha1.MountObjectNotFoundReason, Message: msg}
}

// Read returns the state a mount object reports.
func Read(obj *unstructured.Unstructured) State {
	what := fmt.Sprintf("%s %q", obj.GetKind(), name(obj.GetNamespace(), obj.GetName()))
	if obj.GetAnnotations()[IsMountAnnotation] != "true" {
		return State{Phase: tenancyv1alpha1.MountPhaseUnknown, Reason: tenancyv1alpha1.MountAnnotationInvalidReason,
			Message: fmt.Sprintf("%s is not a mount: it lacks the annotation %s: \"true\"", what, IsMountAnnotation)}
	}
	url, _, _ := unstructured.NestedString(obj.Object, "status", "URL")
	phase, _, _ := unstructured.NestedString(obj.Object, "status", "phase")
	s := State{URL: url, Phase: tenancyv1alpha1.MountPhaseType(phase)}
	switch {
	case s.Phase != tenancyv1alpha1.MountPhaseReady:
		if s.Phase == "" {
			s.Phase = tenancyv1alpha1.MountPhaseUnknown
		}
		s.Reason = tenancyv1alpha1.MountObjectNotReadyReason
		s.Message = fmt.Sprintf("Mount is not reporting ready: %s is in phase %s. See its status for more details", what, s.Phase)
	case url == "":
		s.Reason = tenancyv1alpha1.MountObjectNotReadyReason
		s.Message = fmt.Sprintf("Mount is not reporting a URL: %s has no status.URL", what)
	}
	return s
}

func name(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}
