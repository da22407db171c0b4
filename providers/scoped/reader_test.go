package scoped

import (
	"context"
	"fmt"
	"slices"
	"testing"

	kcpcache "github.com/kcp-dev/apimachinery/v2/pkg/cache"
	"github.com/kcp-dev/logicalcluster/v3"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// fieldIndex indexes data["owner"] of config maps with the keys the
// wildcard cache's IndexField and controller-runtime's cache give it.
func fieldIndex(obj any) ([]string, error) {
	cm := obj.(*corev1.ConfigMap)
	v, ok := cm.Data["owner"]
	if !ok {
		return nil, nil
	}
	c := logicalcluster.From(cm).String()
	return []string{cm.Namespace + "/" + c + "/" + v, "__all_namespaces/" + c + "/" + v}, nil
}

func indexer(indexers toolscache.Indexers) toolscache.Indexer {
	all := toolscache.Indexers{
		kcpcache.ClusterIndexName:             kcpcache.ClusterIndexFunc,
		kcpcache.ClusterAndNamespaceIndexName: kcpcache.ClusterAndNamespaceIndexFunc,
	}
	for k, v := range indexers {
		all[k] = v
	}
	return toolscache.NewIndexer(kcpcache.MetaClusterNamespaceKeyFunc, all)
}

func objMeta(cluster, ns, name string, labels map[string]string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels,
		Annotations: map[string]string{logicalcluster.AnnotationKey: cluster}}
}

// stores holds config maps (namespaced) and namespaces (cluster-scoped) of
// the clusters "a" and "b".
func stores(t *testing.T) StoreFunc {
	t.Helper()
	cms := indexer(toolscache.Indexers{"field:data.owner": fieldIndex})
	nss := indexer(nil)
	for _, o := range []*corev1.ConfigMap{
		{ObjectMeta: objMeta("a", "ns1", "one", map[string]string{"tier": "x"}), Data: map[string]string{"owner": "alice", "v": "a-one"}},
		{ObjectMeta: objMeta("a", "ns1", "two", nil), Data: map[string]string{"owner": "bob"}},
		{ObjectMeta: objMeta("a", "ns2", "three", map[string]string{"tier": "x"}), Data: map[string]string{"owner": "alice"}},
		{ObjectMeta: objMeta("b", "ns1", "one", map[string]string{"tier": "x"}), Data: map[string]string{"owner": "alice", "v": "b-one"}},
	} {
		if err := cms.Add(o); err != nil {
			t.Fatal(err)
		}
	}
	for _, o := range []*corev1.Namespace{{ObjectMeta: objMeta("a", "", "ns1", nil)}, {ObjectMeta: objMeta("b", "", "other", nil)}} {
		if err := nss.Add(o); err != nil {
			t.Fatal(err)
		}
	}
	return func(obj runtime.Object) (toolscache.Indexer, schema.GroupVersionKind, meta.RESTScopeName, error) {
		switch obj.(type) {
		case *corev1.ConfigMap, *corev1.ConfigMapList, *corev1.Secret:
			return cms, corev1.SchemeGroupVersion.WithKind("ConfigMap"), meta.RESTScopeNameNamespace, nil
		case *corev1.Namespace, *corev1.NamespaceList:
			return nss, corev1.SchemeGroupVersion.WithKind("Namespace"), meta.RESTScopeNameRoot, nil
		}
		return nil, schema.GroupVersionKind{}, "", fmt.Errorf("no informer for %T", obj)
	}
}

func TestReaderGet(t *testing.T) {
	ctx := context.Background()
	store := stores(t)
	a, b := NewReader(store, "a"), NewReader(store, "b")

	var cm corev1.ConfigMap
	if err := a.Get(ctx, client.ObjectKey{Namespace: "ns1", Name: "one"}, &cm); err != nil {
		t.Fatal(err)
	}
	if cm.Data["v"] != "a-one" || cm.Kind != "ConfigMap" || cm.APIVersion != "v1" {
		t.Fatalf("cluster a's ns1/one: got data %v kind %q apiVersion %q", cm.Data, cm.Kind, cm.APIVersion)
	}
	cm.Data["v"] = "changed"
	var again corev1.ConfigMap
	if err := a.Get(ctx, client.ObjectKey{Namespace: "ns1", Name: "one"}, &again); err != nil || again.Data["v"] != "a-one" {
		t.Fatalf("a change to the copy reached the store: %v %v", again.Data, err)
	}
	if err := b.Get(ctx, client.ObjectKey{Namespace: "ns1", Name: "one"}, &cm); err != nil || cm.Data["v"] != "b-one" {
		t.Fatalf("cluster b's ns1/one: got %v, %v", cm.Data, err)
	}
	if err := b.Get(ctx, client.ObjectKey{Namespace: "ns1", Name: "two"}, &cm); !apierrors.IsNotFound(err) {
		t.Fatalf("cluster a's ns1/two read from cluster b: want NotFound, got %v", err)
	}
	var ns corev1.Namespace
	if err := a.Get(ctx, client.ObjectKey{Namespace: "ignored", Name: "ns1"}, &ns); err != nil || ns.Name != "ns1" {
		t.Fatalf("cluster-scoped ns1 in a: got %q, %v", ns.Name, err)
	}
	if err := a.Get(ctx, client.ObjectKey{Name: "other"}, &ns); !apierrors.IsNotFound(err) {
		t.Fatalf("cluster b's namespace read from a: want NotFound, got %v", err)
	}
	if err := a.Get(ctx, client.ObjectKey{Namespace: "ns1", Name: "one"}, &corev1.Secret{}); err == nil || apierrors.IsNotFound(err) {
		t.Fatalf("a config map read into a Secret: want a type error, got %v", err)
	}
}

func names(t *testing.T, list *corev1.ConfigMapList) []string {
	t.Helper()
	var out []string
	for _, cm := range list.Items {
		if logicalcluster.From(&cm).String() != "a" {
			t.Errorf("%s/%s of cluster %s listed in cluster a", cm.Namespace, cm.Name, logicalcluster.From(&cm))
		}
		out = append(out, cm.Namespace+"/"+cm.Name)
	}
	slices.Sort(out)
	return out
}

func TestReaderList(t *testing.T) {
	ctx := context.Background()
	a := NewReader(stores(t), "a")
	for _, tc := range []struct {
		name string
		opts []client.ListOption
		want []string
	}{
		{"all", nil, []string{"ns1/one", "ns1/two", "ns2/three"}},
		{"namespace", []client.ListOption{client.InNamespace("ns1")}, []string{"ns1/one", "ns1/two"}},
		{"labels", []client.ListOption{client.MatchingLabels{"tier": "x"}}, []string{"ns1/one", "ns2/three"}},
		{"field", []client.ListOption{client.MatchingFields{"data.owner": "alice"}}, []string{"ns1/one", "ns2/three"}},
		{"field in namespace", []client.ListOption{client.MatchingFields{"data.owner": "alice"}, client.InNamespace("ns2")}, []string{"ns2/three"}},
		{"field nobody", []client.ListOption{client.MatchingFields{"data.owner": "carol"}}, nil},
		{"limit", []client.ListOption{client.Limit(1)}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var list corev1.ConfigMapList
			if err := a.List(ctx, &list, tc.opts...); err != nil {
				t.Fatal(err)
			}
			got := names(t, &list)
			if tc.name == "limit" {
				if len(got) != 1 {
					t.Fatalf("Limit(1) listed %q", got)
				}
				return
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("listed %q, want %q", got, tc.want)
			}
		})
	}

	var list corev1.ConfigMapList
	sel := client.MatchingFieldsSelector{Selector: fields.OneTermNotEqualSelector("data.owner", "alice")}
	if err := a.List(ctx, &list, sel); err == nil {
		t.Error("a field selector that is not an exact match was answered")
	}
	if err := a.List(ctx, &list, client.MatchingFields{"data.owner": "alice", "data.unindexed": "x"}); err == nil {
		t.Error("a selector on a field without an index was answered")
	}
	var nss corev1.NamespaceList
	if err := a.List(ctx, &nss, client.InNamespace("ns1")); err != nil || len(nss.Items) != 1 || nss.Items[0].Name != "ns1" {
		t.Fatalf("cluster a's namespaces: got %v, %v", nss.Items, err)
	}
}
