package clusterstore

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/meshplane/meshplane/core/internal/clusters"
)

func TestKey(t *testing.T) {
	s := &store{prefix: "/configmaps"}
	in := func(c string) context.Context { return clusters.WithCluster(context.Background(), c) }
	for _, tc := range []struct {
		name     string
		ctx      context.Context
		key      string
		wildcard bool
		want     string
		badReq   bool
	}{
		{"object", in("a"), "/configmaps/ns/x", false, "/configmaps/a/ns/x", false},
		{"namespace list", in("a"), "/configmaps/ns", true, "/configmaps/a/ns", false},
		{"cluster list", in("a"), "/configmaps", true, "/configmaps/a", false},
		{"wildcard list", in("*"), "/configmaps", true, "/configmaps", false},
		{"wildcard namespaced list", in("*"), "/configmaps/ns", true, "", true},
		{"wildcard write", in("*"), "/configmaps/ns/x", false, "", true},
		{"no cluster", context.Background(), "/configmaps/ns/x", false, "", true},
	} {
		got, err := s.key(tc.ctx, tc.key, tc.wildcard)
		if tc.badReq {
			if !apierrors.IsBadRequest(err) {
				t.Errorf("%s: want a BadRequest, got %q, %v", tc.name, got, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: key(%q) = %q, %v; want %q", tc.name, tc.key, got, err, tc.want)
		}
	}
	if _, err := s.key(in("a"), "/secrets/ns/x", false); err == nil {
		t.Errorf("a key outside the resource prefix must be refused")
	}
	if _, err := s.key(in("a"), "/configmapsx/ns", false); err == nil {
		t.Errorf("a key sharing only a string prefix must be refused")
	}
}

func TestStampAndFilter(t *testing.T) {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x"}}
	if err := stamp(clusters.WithCluster(context.Background(), "a"), cm); err != nil || cm.Annotations[clusters.Annotation] != "a" {
		t.Fatalf("stamp: %v, annotations %v", err, cm.Annotations)
	}
	if err := stamp(clusters.WithCluster(context.Background(), "*"), cm); err == nil {
		t.Errorf("stamping for the wildcard must fail")
	}
	list := &corev1.ConfigMapList{}
	for _, c := range []string{"a", "b", "a"} {
		list.Items = append(list.Items, corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{clusters.Annotation: c}}})
	}
	keepA := func(cluster string, _ runtime.Object) bool { return cluster == "a" }
	if err := filterList(list, keepA); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 2 {
		t.Errorf("filterList kept %d items, want the 2 of cluster a", len(list.Items))
	}
}

func TestCheckResourceVersion(t *testing.T) {
	for rv, ok := range map[string]bool{"": true, "0": true, "12345": true, "abc": false, "-1": false} {
		err := checkResourceVersion(rv)
		if ok != (err == nil) {
			t.Errorf("resourceVersion %q: got %v", rv, err)
		}
		if err != nil && !apierrors.IsBadRequest(err) {
			t.Errorf("resourceVersion %q: want a 400, got %v", rv, err)
		}
	}
}
