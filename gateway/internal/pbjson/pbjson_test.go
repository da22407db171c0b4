package pbjson

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"reflect"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/apitesting/fuzzer"
	"k8s.io/apimachinery/pkg/api/resource"
	metafuzzer "k8s.io/apimachinery/pkg/apis/meta/fuzzer"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/randfill"
)

var (
	pbSerializer = protobuf.NewSerializer(kinds, kinds)
	codecs       = serializer.NewCodecFactory(kinds)
)

// expected encodes obj as the core would: protobuf, and JSON of the object
// as it comes back from protobuf (what a core storing protobuf holds).
func expected(t *testing.T, obj runtime.Object) (pb []byte, js any) {
	t.Helper()
	var buf bytes.Buffer
	if err := pbSerializer.Encode(obj, &buf); err != nil {
		t.Fatalf("protobuf: %v", err)
	}
	back, _, err := pbSerializer.Decode(buf.Bytes(), nil, nil)
	if err != nil {
		t.Fatalf("decoding protobuf: %v", err)
	}
	back.GetObjectKind().SetGroupVersionKind(obj.GetObjectKind().GroupVersionKind())
	b, err := json.Marshal(back)
	if err != nil {
		t.Fatalf("JSON: %v", err)
	}
	return buf.Bytes(), decode(t, b)
}

func decode(t *testing.T, b []byte) any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("invalid JSON %q: %v", b, err)
	}
	return dropNulls(v)
}

// dropNulls removes members whose value is null: a field the protobuf
// answer does not carry reads as null in GraphQL either way.
func dropNulls(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if e == nil {
				delete(x, k)
				continue
			}
			x[k] = dropNulls(e)
		}
	case []any:
		for i := range x {
			x[i] = dropNulls(x[i])
		}
	}
	return v
}

func transcode(t *testing.T, pb []byte, proj Projection) any {
	t.Helper()
	var out bytes.Buffer
	if err := Transcode(&out, pb, proj); err != nil {
		t.Fatalf("Transcode: %v", err)
	}
	return decode(t, out.Bytes())
}

func sample() *corev1.PodList {
	ctime := metav1.Unix(1700000000, 0)
	return &corev1.PodList{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PodList"},
		ListMeta: metav1.ListMeta{ResourceVersion: "42", Continue: "next"},
		Items: []corev1.Pod{{
			ObjectMeta: metav1.ObjectMeta{
				Name: "web", Namespace: "default", UID: "u-1", CreationTimestamp: ctime,
				Labels:          map[string]string{"z": "last", "app": "web", "a<b": "x&y"},
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-1", UID: "u-0"}},
				ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply,
					Time: &ctime, FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:labels":{}}}`)}}},
			},
			Spec: corev1.PodSpec{
				Containers: []corev1.Container{{
					Name: "c", Image: "nginx", Args: []string{"-v", "ünïcode"},
					Ports: []corev1.ContainerPort{{ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
					Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{
						corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("1Gi")}},
					LivenessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/", Port: intstr.FromString("http")}}},
					ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(-3)}},
						InitialDelaySeconds: 0, PeriodSeconds: 5},
				}},
				Volumes: []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
			},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, StartTime: &ctime,
				Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}},
		}, {
			ObjectMeta: metav1.ObjectMeta{Name: "empty"},
		}},
	}
}

// TestTranscodeSample compares a list of pods with the JSON the core would
// send: nested messages, inlined ones (a volume's source), maps (sorted),
// quantities, int-or-string, times, raw JSON (fieldsV1), zero values and
// strings that need escaping.
func TestTranscodeSample(t *testing.T) {
	pb, want := expected(t, sample())
	got := transcode(t, pb, nil)
	if !reflect.DeepEqual(got, want) {
		g, _ := json.MarshalIndent(got, "", " ")
		w, _ := json.MarshalIndent(want, "", " ")
		t.Fatalf("transcoded:\n%s\nwant:\n%s", g, w)
	}
}

// TestTranscodeProjection keeps only the selected members.
func TestTranscodeProjection(t *testing.T) {
	pb, want := expected(t, sample())
	proj := Projection{"metadata": nil, "items": Projection{
		"metadata": Projection{"name": nil, "labels": nil, "creationTimestamp": nil},
		"spec":     Projection{"containers": Projection{"name": nil, "resources": nil}},
	}}
	got := transcode(t, pb, proj)
	prune(want, proj)
	if !reflect.DeepEqual(got, want) {
		g, _ := json.MarshalIndent(got, "", " ")
		w, _ := json.MarshalIndent(want, "", " ")
		t.Fatalf("transcoded:\n%s\nwant:\n%s", g, w)
	}
	if s, _ := json.Marshal(got); strings.Contains(string(s), "managedFields") || strings.Contains(string(s), "nginx") {
		t.Fatalf("unselected members kept: %s", s)
	}
}

// prune applies proj to decoded JSON (apiVersion and kind stay at the top).
func prune(v any, proj Projection) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			sub, ok := proj[k]
			if !ok {
				if k != "apiVersion" && k != "kind" {
					delete(x, k)
				}
				continue
			}
			if sub != nil {
				prune(e, sub)
			}
		}
	case []any:
		for _, e := range x {
			prune(e, proj)
		}
	}
}

// TestTranscodeFuzz fills every kind of the built-in groups with random
// values and compares the transcoded protobuf with the JSON.
func TestTranscodeFuzz(t *testing.T) {
	f := fuzzer.FuzzerFor(fuzzer.MergeFuzzerFuncs(metafuzzer.Funcs, func(serializer.CodecFactory) []any {
		return []any{
			func(j *intstr.IntOrString, c randfill.Continue) {
				if c.Bool() {
					*j = intstr.FromInt32(c.Int31() - 1<<30)
				} else {
					*j = intstr.FromString(c.String(0))
				}
			},
			func(j *metav1.Duration, c randfill.Continue) { j.Duration = 0; c.Fill(&j.Duration) },
		}
	}), rand.NewSource(7), codecs).NilChance(0.3).NumElements(0, 3)
	var gvks []schema.GroupVersionKind
	for gvk := range kinds.AllKnownTypes() {
		if gvk.Version == runtime.APIVersionInternal || strings.HasSuffix(gvk.Kind, "Options") || gvk.Kind == "WatchEvent" {
			continue
		}
		gvks = append(gvks, gvk)
	}
	sort.Slice(gvks, func(i, j int) bool { return gvks[i].String() < gvks[j].String() })
	supported := 0
	for _, gvk := range gvks {
		if !Supports(gvk) {
			continue
		}
		supported++
		for i := 0; i < 3; i++ {
			obj, err := kinds.New(gvk)
			if err != nil {
				t.Fatal(err)
			}
			f.Fill(obj)
			obj.GetObjectKind().SetGroupVersionKind(gvk)
			pb, want := expected(t, obj)
			got := transcode(t, pb, nil)
			if !reflect.DeepEqual(got, want) {
				g, _ := json.Marshal(got)
				w, _ := json.Marshal(want)
				t.Fatalf("%v: transcoded:\n%s\nwant:\n%s", gvk, g, w)
			}
		}
	}
	if supported < 50 {
		t.Fatalf("only %d kinds supported", supported)
	}
	t.Logf("%d of %d kinds supported and compared", supported, len(gvks))

	// Plans selecting every member of every list kind's items, against
	// the same selection over the JSON.
	lists := 0
	for _, gvk := range gvks {
		if !strings.HasSuffix(gvk.Kind, "List") || !Supports(gvk) {
			continue
		}
		ref, ok := layoutOf(gvk).byName["items"]
		if !ok || !ref.f.repeated || ref.f.elem.msg == nil {
			continue // v1 List: raw objects
		}
		lists++
		items := ref.f.elem.msg
		specs := allMembers(items, 0)
		p, err := Compile(gvk, specs)
		if err != nil {
			t.Fatalf("%v: %v", gvk, err)
		}
		for i := 0; i < 3; i++ {
			obj, _ := kinds.New(gvk)
			f.Fill(obj)
			obj.GetObjectKind().SetGroupVersionKind(gvk)
			pb, want := expected(t, obj)
			list, err := ParseList(pb)
			if err != nil {
				t.Fatal(err)
			}
			var got, sel bytes.Buffer
			if err := p.WriteItems(&got, list.Items); err != nil {
				t.Fatalf("%v: %v", gvk, err)
			}
			sel.WriteByte('[')
			wantItems, _ := want.(map[string]any)["items"].([]any)
			for j, it := range wantItems {
				if j > 0 {
					sel.WriteByte(',')
				}
				select1(&sel, specs, it)
			}
			sel.WriteByte(']')
			if g, w := decode(t, got.Bytes()), decode(t, sel.Bytes()); !reflect.DeepEqual(g, w) {
				t.Fatalf("%v: written:\n%s\nwant:\n%s", gvk, got.Bytes(), sel.Bytes())
			}
		}
	}
	t.Logf("%d list kinds written by plans and compared", lists)
}

// allMembers selects every member of m, objects and lists of objects
// member by member.
func allMembers(m *message, depth int) []Spec {
	names := make([]string, 0, len(m.byName))
	for n := range m.byName {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []Spec
	for _, n := range names {
		f := m.byName[n].f
		s := Spec{Key: n, Member: n, List: f.repeated}
		msg := f.msg
		if f.repeated {
			msg = f.elem.msg
		}
		if msg != nil && f.mapVal == nil && depth < 10 {
			s.Sub = allMembers(msg, depth+1)
		}
		out = append(out, s)
	}
	return out
}

// BenchmarkTranscodeList transcodes a list of 100 configmaps like the
// gateway benchmark's (a label, 3 data keys, one managedFields entry),
// keeping what its query selects.
func BenchmarkTranscodeList(b *testing.B) {
	ctime := metav1.Unix(1700000000, 0)
	list := &corev1.ConfigMapList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMapList"}, ListMeta: metav1.ListMeta{ResourceVersion: "9"}}
	for i := 0; i < 100; i++ {
		list.Items = append(list.Items, corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%03d", i), Namespace: "default", UID: "0f4c6c1e-7d36-4a51-9d1c-3b1b2a6f8e0a",
				ResourceVersion: "123", CreationTimestamp: ctime, Labels: map[string]string{"app": "bench"},
				Annotations: map[string]string{"kcp.io/cluster": "2fopqek9gr0uu1ee", "kubectl.kubernetes.io/last-applied-configuration": `{"apiVersion":"v1","data":{"a":"1","b":"two","c":"three"},"kind":"ConfigMap","metadata":{"annotations":{},"labels":{"app":"bench"},"name":"cm-000","namespace":"default"}}`},
				ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl-client-side-apply", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1",
					Time: &ctime, FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:data":{".":{},"f:a":{},"f:b":{},"f:c":{}},"f:metadata":{"f:annotations":{".":{},"f:kubectl.kubernetes.io/last-applied-configuration":{}},"f:labels":{".":{},"f:app":{}}}}`)}}},
			},
			Data: map[string]string{"a": "1", "b": "two", "c": "three"},
		})
	}
	var in bytes.Buffer
	if err := pbSerializer.Encode(list, &in); err != nil {
		b.Fatal(err)
	}
	proj := Projection{"metadata": nil, "items": Projection{
		"metadata": Projection{"name": nil, "namespace": nil, "uid": nil, "resourceVersion": nil, "labels": nil, "creationTimestamp": nil},
		"data":     nil,
	}}
	var out bytes.Buffer
	b.ReportAllocs()
	b.SetBytes(int64(in.Len()))
	for i := 0; i < b.N; i++ {
		out.Reset()
		if err := Transcode(&out, in.Bytes(), proj); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(out.Len()), "out-bytes")
}

// TestPlan writes pods by a selection straight from protobuf and compares
// with the same selection applied to the JSON: aliases, constants, maps,
// lists of objects and of strings, an inlined member (a volume's
// emptyDir), times, quantities, int-or-string, a missing member and a
// string coerced from a number.
func TestPlan(t *testing.T) {
	pb, js := expected(t, sample())
	specs := []Spec{
		{Key: "__typename", Const: []byte(`"Pod"`)},
		{Key: "metadata", Member: "metadata", Sub: []Spec{
			{Key: "name", Member: "name"}, {Key: "labels", Member: "labels"}, {Key: "creationTimestamp", Member: "creationTimestamp"},
			{Key: "generation", Member: "generation", Coerce: ToInt}, {Key: "nope", Member: "nope"},
			{Key: "managedFields", Member: "managedFields", List: true, Sub: []Spec{{Key: "fieldsV1", Member: "fieldsV1"}, {Key: "time", Member: "time"}}},
		}},
		{Key: "n", Member: "metadata", Sub: []Spec{{Key: "uid", Member: "uid"}}},
		{Key: "spec", Member: "spec", Sub: []Spec{
			{Key: "containers", Member: "containers", List: true, Sub: []Spec{
				{Key: "args", Member: "args", List: true}, {Key: "resources", Member: "resources", Sub: []Spec{{Key: "limits", Member: "limits"}}},
				{Key: "ports", Member: "ports", List: true, Sub: []Spec{{Key: "containerPort", Member: "containerPort", Coerce: ToString}}},
				{Key: "livenessProbe", Member: "livenessProbe", Sub: []Spec{{Key: "httpGet", Member: "httpGet", Sub: []Spec{{Key: "port", Member: "port"}}}}},
				{Key: "readinessProbe", Member: "readinessProbe", Sub: []Spec{{Key: "periodSeconds", Member: "periodSeconds"}, {Key: "initialDelaySeconds", Member: "initialDelaySeconds"}}},
			}},
			{Key: "volumes", Member: "volumes", List: true, Sub: []Spec{{Key: "name", Member: "name"}, {Key: "emptyDir", Member: "emptyDir"}, {Key: "hostPath", Member: "hostPath"}}},
		}},
		{Key: "status", Member: "status", Sub: []Spec{{Key: "phase", Member: "phase"}, {Key: "startTime", Member: "startTime"}}},
	}
	p, err := Compile(schema.GroupVersionKind{Version: "v1", Kind: "PodList"}, specs)
	if err != nil {
		t.Fatal(err)
	}
	list, err := ParseList(pb)
	if err != nil {
		t.Fatal(err)
	}
	if list.ResourceVersion != "42" || list.Continue != "next" || list.RemainingItemCount != nil || len(list.Items) != 2 {
		t.Fatalf("list metadata: %+v", list)
	}
	var got bytes.Buffer
	if err := p.WriteItems(&got, list.Items); err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	want.WriteByte('[')
	for i, it := range js.(map[string]any)["items"].([]any) {
		if i > 0 {
			want.WriteByte(',')
		}
		select1(&want, specs, it)
	}
	want.WriteByte(']')
	if got.String() != want.String() {
		t.Fatalf("written:\n%s\nwant:\n%s", got.String(), want.String())
	}

	if _, err := Compile(schema.GroupVersionKind{Version: "v1", Kind: "PodList"}, []Spec{{Key: "m", Member: "metadata", List: true}}); err == nil {
		t.Fatal("a list over an object member compiled")
	}
}

// select1 applies specs to decoded JSON, as the executor does.
func select1(dst *bytes.Buffer, specs []Spec, v any) {
	obj, _ := v.(map[string]any)
	dst.WriteByte('{')
	for i, s := range specs {
		if i > 0 {
			dst.WriteByte(',')
		}
		k, _ := json.Marshal(s.Key)
		dst.Write(k)
		dst.WriteByte(':')
		if s.Const != nil {
			dst.Write(s.Const)
			continue
		}
		m, ok := obj[s.Member]
		switch {
		case !ok || m == nil:
			dst.WriteString("null")
		case s.List:
			dst.WriteByte('[')
			for j, e := range m.([]any) {
				if j > 0 {
					dst.WriteByte(',')
				}
				leafOrObject(dst, s, e)
			}
			dst.WriteByte(']')
		default:
			leafOrObject(dst, s, m)
		}
	}
	dst.WriteByte('}')
}

func leafOrObject(dst *bytes.Buffer, s Spec, v any) {
	if s.Sub != nil {
		select1(dst, s.Sub, v)
		return
	}
	b, _ := json.Marshal(v)
	coerce(dst, b, s.Coerce)
}
