package builtin

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// eventsV1Fields are the field selectors of events.k8s.io/v1 Events; the
// registry maps them to the core/v1 Event's (regarding.* =
// involvedObject.*, reportingController = reportingComponent,
// deprecatedSource = source).
var eventsV1Fields = []string{"metadata.name", "metadata.namespace", "regarding.kind", "regarding.namespace", "regarding.name",
	"regarding.uid", "regarding.apiVersion", "regarding.resourceVersion", "regarding.fieldPath", "reason", "reportingController",
	"deprecatedSource", "type"}

// selectableFields lists, per kind of core/v1, the field selectors beyond
// metadata.name and metadata.namespace that kube-apiserver supports.
var selectableFields = map[string][]string{
	"Namespace": {"status.phase"},
	"Secret":    {"type"},
	"Event": {"involvedObject.kind", "involvedObject.namespace", "involvedObject.name",
		"involvedObject.uid", "involvedObject.apiVersion", "involvedObject.resourceVersion",
		"involvedObject.fieldPath", "reason", "reportingComponent", "source", "type"},
}

func addFieldLabelConversions(s *runtime.Scheme) error {
	for kind, extra := range selectableFields {
		allowed := map[string]bool{"metadata.name": true, "metadata.namespace": true}
		for _, f := range extra {
			allowed[f] = true
		}
		err := s.AddFieldLabelConversionFunc(corev1.SchemeGroupVersion.WithKind(kind),
			func(label, value string) (string, string, error) {
				if !allowed[label] {
					return "", "", fmt.Errorf("field label not supported: %s", label)
				}
				return label, value, nil
			})
		if err != nil {
			return err
		}
	}
	allowed := map[string]bool{}
	for _, f := range eventsV1Fields {
		allowed[f] = true
	}
	return s.AddFieldLabelConversionFunc(eventsv1.SchemeGroupVersion.WithKind("Event"), func(label, value string) (string, string, error) {
		if !allowed[label] {
			return "", "", fmt.Errorf("field label not supported: %s", label)
		}
		return label, value, nil
	})
}
