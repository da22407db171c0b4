package clusterstore

import (
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/storage"
)

// versioner is kube's APIObjectVersioner whose errors about a resource
// version a client wrote are 400 Statuses: the generic registry returns
// them unchanged, where kube's plain strconv errors became 500s (a PUT,
// PATCH or apply with metadata.resourceVersion "abc").
type versioner struct {
	storage.APIObjectVersioner
}

var _ storage.Versioner = versioner{}

// ObjectResourceVersion implements storage.Versioner.
func (v versioner) ObjectResourceVersion(obj runtime.Object) (uint64, error) {
	rv, err := v.APIObjectVersioner.ObjectResourceVersion(obj)
	if err != nil {
		if s, ok := resourceVersionOf(obj); ok {
			return 0, invalidResourceVersion("metadata.resourceVersion", s)
		}
		return 0, err
	}
	return rv, nil
}

// ParseResourceVersion implements storage.Versioner.
func (v versioner) ParseResourceVersion(rv string) (uint64, error) {
	n, err := v.APIObjectVersioner.ParseResourceVersion(rv)
	if err != nil {
		return 0, invalidResourceVersion("resourceVersion", rv)
	}
	return n, nil
}

func resourceVersionOf(obj runtime.Object) (string, bool) {
	m, ok := obj.(metav1.Object)
	if !ok {
		return "", false
	}
	return m.GetResourceVersion(), true
}

// invalidResourceVersion is the 400 for a resource version the server
// never handed out, naming the field as kube's validation does.
func invalidResourceVersion(field, value string) error {
	msg := fmt.Sprintf("%s: Invalid value: %q: must be a resource version returned by the server (an unsigned integer)", field, value)
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusBadRequest, Reason: metav1.StatusReasonBadRequest, Message: msg,
		Details: &metav1.StatusDetails{Causes: []metav1.StatusCause{{Type: metav1.CauseTypeFieldValueInvalid, Message: msg, Field: field}}},
	}}
}
