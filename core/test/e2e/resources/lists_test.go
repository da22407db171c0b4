package resources

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestListsFollowChanges lists configmaps over JSON and over protobuf
// while they change: the server caches each listed item's serialized form
// by UID and resourceVersion, and every LIST must still show the latest
// data, labels and resourceVersion of every object, and no deleted one.
func TestListsFollowChanges(t *testing.T) {
	s := server(t)
	cluster, k := s.NewCluster(t, "e2e-lists")
	const ns = "lists"
	k.Run(t, "create", "namespace", ns)

	jsonCfg := s.RESTConfig(t, cluster)
	pbCfg := s.RESTConfig(t, cluster)
	pbCfg.ContentType = protobuf
	pbCfg.AcceptContentTypes = protobuf
	clients := map[string]kubernetes.Interface{}
	for name, cfg := range map[string]*rest.Config{"JSON": jsonCfg, "protobuf": pbCfg} {
		c, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		clients[name] = c
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cms := clients["JSON"].CoreV1().ConfigMaps(ns)

	// want is the expected state: name -> "data k|label l|resourceVersion".
	want := map[string]string{}
	state := func(cm *corev1.ConfigMap) string {
		return fmt.Sprintf("%s|%s|%s", cm.Data["k"], cm.Labels["l"], cm.ResourceVersion)
	}
	for i := range 20 {
		cm, err := cms.Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%02d", i), Labels: map[string]string{"l": "a"}},
			Data:       map[string]string{"k": "v1"},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		want[cm.Name] = state(cm)
	}
	check := func(step string) {
		t.Helper()
		for name, c := range clients {
			for range 2 { // the second LIST is served from the cached items
				list, err := c.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{LabelSelector: "l"}) // not kube-root-ca.crt
				if err != nil {
					t.Fatalf("%s: %s list: %v", step, name, err)
				}
				got := map[string]string{}
				for i := range list.Items {
					got[list.Items[i].Name] = state(&list.Items[i])
				}
				framework.RequireEqual(t, fmt.Sprint(got), fmt.Sprint(want), step+": "+name+" list")
			}
		}
	}
	check("after the creates")

	for i := range 5 { // data changes
		cm, err := cms.Get(ctx, fmt.Sprintf("cm-%02d", i), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cm.Data["k"] = "v2"
		if cm, err = cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		want[cm.Name] = state(cm)
	}
	for i := 5; i < 10; i++ { // metadata-only changes
		cm, err := cms.Get(ctx, fmt.Sprintf("cm-%02d", i), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cm.Labels["l"] = "b"
		if cm, err = cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		want[cm.Name] = state(cm)
	}
	for i := 10; i < 12; i++ {
		name := fmt.Sprintf("cm-%02d", i)
		if err := cms.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		delete(want, name)
	}
	check("after updates and deletes")

	// Recreated under the same name: a new UID.
	cm, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm-10", Labels: map[string]string{"l": "c"}}, Data: map[string]string{"k": "again"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want[cm.Name] = state(cm)
	check("after a re-create")
}
