package bodylimits

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/client-go/kubernetes/scheme"
	sigsyaml "sigs.k8s.io/yaml"
)

func configMap(labels, data int) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: "cm", Labels: map[string]string{}}, Data: map[string]string{}}
	for i := 0; i < labels; i++ {
		cm.Labels[fmt.Sprintf("label-%06d", i)] = fmt.Sprintf("value-%06d", i)
	}
	for i := 0; i < data; i++ {
		cm.Data[fmt.Sprintf("key-%06d", i)] = strings.Repeat("x", 10)
	}
	return cm
}

func encodings(t *testing.T, obj runtime.Object) map[string][]byte {
	t.Helper()
	js, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	yml, err := sigsyaml.JSONToYAML(js)
	if err != nil {
		t.Fatal(err)
	}
	var pb bytes.Buffer
	if err := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme).Encode(obj, &pb); err != nil {
		t.Fatal(err)
	}
	return map[string][]byte{"application/json": js, "application/apply-patch+yaml": yml,
		"application/vnd.kubernetes.protobuf": pb.Bytes(), "application/merge-patch+json; charset=utf-8": js}
}

func TestCheck(t *testing.T) {
	for _, tt := range []struct {
		name    string
		obj     runtime.Object
		refused bool
	}{
		{"10,000 labels", configMap(MaxEntries, 0), false},
		{"10,001 labels", configMap(MaxEntries+1, 0), true},
		{"100,000 labels", configMap(100_000, 0), true},
		{"10,001 data keys", configMap(0, MaxEntries+1), true},
		{"5,000 labels and 5,000 data keys", configMap(5000, 5000), false},
		{"a list of 10,001 finalizers", &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Name: "cm", Finalizers: make([]string, MaxEntries+1)}}, true},
	} {
		for contentType, body := range encodings(t, tt.obj) {
			err := Check(contentType, body)
			if tt.refused != (err != nil) {
				t.Errorf("%s as %s (%d bytes): error %v, want refused=%v", tt.name, contentType, len(body), err, tt.refused)
			}
		}
	}
}

func TestCheckJSONLists(t *testing.T) {
	list := func(n int, item string) string {
		return "[" + strings.TrimSuffix(strings.Repeat(item+",", n), ",") + "]"
	}
	for _, tt := range []struct {
		body    string
		refused bool
	}{
		{list(MaxEntries, "1"), false},
		{list(MaxEntries+1, "1"), true},
		{list(MaxEntries+1, `"a,b"`), true},
		{`{"a":` + list(MaxEntries, "{}") + `}`, false},
		{`{"a":` + list(MaxEntries+1, "null") + `}`, true},
		{`{"s":"` + strings.Repeat(`:,\"`, 3*MaxEntries) + `"}`, false},
		{"[]", false},
	} {
		if err := Check("application/json", []byte(tt.body)); tt.refused != (err != nil) {
			t.Errorf("%.40s...: error %v, want refused=%v", tt.body, err, tt.refused)
		}
	}
}

func TestWithLimits(t *testing.T) {
	codecs := serializer.NewCodecFactory(scheme.Scheme)
	var got []byte
	h := WithLimits(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, _ = readAll(r)
		w.WriteHeader(http.StatusCreated)
	}), codecs)
	send := func(body []byte) int {
		rec := httptest.NewRecorder()
		r := httptest.NewRequest(http.MethodPost, "/api/v1/namespaces/a/configmaps", bytes.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		h.ServeHTTP(rec, r)
		return rec.Code
	}
	ok, _ := json.Marshal(configMap(MaxEntries, 0))
	if code := send(ok); code != http.StatusCreated || !bytes.Equal(got, ok) {
		t.Errorf("a body within the limits: %d, body passed on intact %v", code, bytes.Equal(got, ok))
	}
	many, _ := json.Marshal(configMap(MaxEntries+1, 0))
	if code := send(many); code != http.StatusRequestEntityTooLarge {
		t.Errorf("10,001 labels: %d, want 413", code)
	}
	if code := send(bytes.Repeat([]byte(" "), MaxBodyBytes+1)); code != http.StatusRequestEntityTooLarge {
		t.Errorf("a body over 3 MiB: %d, want 413", code)
	}
}

func readAll(r *http.Request) ([]byte, error) {
	var b bytes.Buffer
	_, err := b.ReadFrom(r.Body)
	return b.Bytes(), err
}
