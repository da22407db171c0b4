package runner_test

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/meshplane/meshplane/core/pkg/clusters"
	"github.com/meshplane/meshplane/core/pkg/reconciler/runner"
)

func ExampleKeyOf() {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "settings",
		Annotations: map[string]string{clusters.Annotation: "2x7dcnd4y8y4zdhk"}}}
	key, _ := runner.KeyOf(cm)
	fmt.Println(key.Cluster, key.Namespace, key.Name)
	fmt.Println(key)
	// Output:
	// 2x7dcnd4y8y4zdhk default settings
	// 2x7dcnd4y8y4zdhk|default/settings
}
