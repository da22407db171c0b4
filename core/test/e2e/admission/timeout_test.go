package admission

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// A create whose validating webhook answers after the request's timeout
// (?timeout=1s) is answered 504 with a Timeout Status, as kube-apiserver
// answers, about when the timeout passes rather than when the webhook
// answers.
func TestSlowWebhookTimesOutRequest(t *testing.T) {
	t.Parallel()
	s := server(t)
	release := make(chan struct{})
	deny := denyPrefix("deny-")
	wh := startWebhook(t, func(path string, req *admissionv1.AdmissionRequest) (bool, string, []map[string]any) {
		if strings.Contains(string(req.Object.Raw), `"slow-`) {
			select {
			case <-release:
			case <-time.After(8 * time.Second):
			}
		}
		return deny(path, req)
	})
	t.Cleanup(func() { close(release) }) // before the webhook server's Close
	cluster, k := newCluster(t, s, "adm-slow", "work")
	k.RunStdin(t, webhookConfig{kind: "ValidatingWebhookConfiguration", name: "slow", url: wh.URL + "/slow", caBundle: wh.CABundle,
		extra: "  timeoutSeconds: 10\n"}.yaml(), "apply", "-f", "-")
	waitRefused(t, k, "work", "deny-", "the test webhook refuses")

	cfg := s.RESTConfig(t, cluster)
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	body := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"slow-1"}}`
	start := time.Now()
	resp, err := client.Post(strings.TrimSuffix(cfg.Host, "/")+"/api/v1/namespaces/work/configmaps?timeout=1s", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatalf("creating a configmap with ?timeout=1s: %v", err)
	}
	defer resp.Body.Close()
	took := time.Since(start)
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusGatewayTimeout {
		t.Fatalf("answer %d after %s: %s; want 504", resp.StatusCode, took, out)
	}
	var status metav1.Status
	if err := json.Unmarshal(out, &status); err != nil {
		t.Fatalf("the 504's body %q is not a Status: %v", out, err)
	}
	if status.Reason != metav1.StatusReasonTimeout || status.Code != http.StatusGatewayTimeout {
		t.Errorf("Status reason %q code %d, want Timeout 504 (%s)", status.Reason, status.Code, out)
	}
	if took > 6*time.Second {
		t.Errorf("answered after %s: the 1s timeout did not end the request before the webhook answered", took)
	}
}
