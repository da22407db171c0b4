package admission

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// BenchmarkCreateConfigMap measures ConfigMap creates with client-go in a
// logical cluster without any webhook and with one validating webhook
// (a real HTTPS webhook on loopback that allows everything): the
// difference is the webhook round trip. Run with
//
//	go test -run '^$' -bench CreateConfigMap ./core/test/e2e/admission/
//
// It reports creates/s; there is no timed assertion.
func BenchmarkCreateConfigMap(b *testing.B) {
	s := server(b)
	for _, withWebhook := range []bool{false, true} {
		name := "none"
		if withWebhook {
			name = "validating-webhook"
		}
		b.Run(name, func(b *testing.B) {
			cluster, k := s.NewCluster(b, "adm-bench")
			k.Run(b, "create", "namespace", "bench")
			cfg := s.RESTConfig(b, cluster)
			cfg.QPS, cfg.Burst = -1, 0
			client, err := kubernetes.NewForConfig(cfg)
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			create := func(n string) error {
				_, err := client.CoreV1().ConfigMaps("bench").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: n}}, metav1.CreateOptions{})
				return err
			}
			if withWebhook {
				wh := startWebhook(b, allowAll)
				k.RunStdin(b, webhookConfig{kind: "ValidatingWebhookConfiguration", name: "bench", url: wh.URL + "/bench", caBundle: wh.CABundle}.yaml(),
					"apply", "-f", "-")
				n := 0
				framework.Eventually(b, 30*time.Second, 100*time.Millisecond, "the webhook to be called", func() (bool, string) {
					n++
					_ = create(fmt.Sprintf("probe-%d", n))
					return len(wh.seen("/bench")) > 0, ""
				})
			}
			for i := 0; i < 20; i++ { // warm connections and caches
				if err := create(fmt.Sprintf("warm-%d", i)); err != nil {
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				if err := create(fmt.Sprintf("cm-%d", i)); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "creates/s")
		})
	}
}
