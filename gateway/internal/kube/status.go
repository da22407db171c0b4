package kube

import (
	"bytes"
	"encoding/json"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// protobufMagic starts every protobuf answer of the core (a runtime.Unknown
// envelope follows).
var protobufMagic = []byte("k8s\x00")

// decodeStatus reads the metav1.Status of a failed request's body, as the
// core sends it: JSON, or protobuf when the request accepted protobuf. It
// reports false when the body is neither.
func decodeStatus(b []byte) (*metav1.Status, bool) {
	if rest, ok := bytes.CutPrefix(b, protobufMagic); ok {
		var u runtime.Unknown
		if err := u.Unmarshal(rest); err != nil || u.Kind != "Status" {
			return nil, false
		}
		st := &metav1.Status{}
		if err := st.Unmarshal(u.Raw); err != nil {
			return nil, false
		}
		return st, true
	}
	st := &metav1.Status{}
	if err := json.Unmarshal(b, st); err != nil || st.Kind != "Status" {
		return nil, false
	}
	return st, true
}
