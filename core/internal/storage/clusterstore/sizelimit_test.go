package clusterstore

import (
	"bytes"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/kubernetes/scheme"
)

func TestSizeLimitedCodec(t *testing.T) {
	codecs := serializer.NewCodecFactory(scheme.Scheme)
	codec := limitSize(codecs.LegacyCodec(corev1.SchemeGroupVersion), 1000)
	cm := func(n int) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Data: map[string]string{"k": strings.Repeat("x", n)}}
	}
	var buf bytes.Buffer
	if err := codec.Encode(cm(100), &buf); err != nil || buf.Len() == 0 {
		t.Fatalf("encoding a small object: %v (%d bytes)", err, buf.Len())
	}
	buf.Reset()
	err := codec.Encode(cm(2000), &buf)
	if !apierrors.IsRequestEntityTooLargeError(err) || !strings.Contains(err.Error(), "request is too large") {
		t.Fatalf("encoding an object over the limit: want a 413 saying the request is too large, got %v", err)
	}
}
