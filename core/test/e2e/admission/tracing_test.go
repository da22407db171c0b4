package admission

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"k8s.io/client-go/rest"
)

// An incoming W3C trace context (traceparent, baggage) is carried through
// to the admission webhook the request calls, as kube-apiserver does with
// its no-op tracer provider; a request without one calls the webhook
// without one.
func TestTraceContextReachesWebhook(t *testing.T) {
	t.Parallel()
	s := server(t)
	wh := startWebhook(t, denyPrefix("deny-"))
	cluster, k := newCluster(t, s, "adm-trace", "work")
	k.RunStdin(t, webhookConfig{kind: "ValidatingWebhookConfiguration", name: "trace", url: wh.URL + "/trace", caBundle: wh.CABundle}.yaml(),
		"apply", "-f", "-")
	waitRefused(t, k, "work", "deny-", "the test webhook refuses")

	cfg := s.RESTConfig(t, cluster)
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	create := func(name string, header http.Header) {
		t.Helper()
		body := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"` + name + `"}}`
		req, err := http.NewRequest(http.MethodPost, strings.TrimSuffix(cfg.Host, "/")+"/api/v1/namespaces/work/configmaps",
			strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header = header
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("creating configmap %s: %v", name, err)
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("creating configmap %s: %d %s", name, resp.StatusCode, out)
		}
	}
	create("traced", http.Header{
		"Traceparent": {"00-" + traceID + "-00f067aa0ba902b7-01"},
		"Baggage":     {"tenant=acme"},
	})
	create("untraced", http.Header{})

	seen := map[string]review{}
	for _, r := range wh.seen("/trace") {
		seen[r.Name] = r
	}
	traced, ok := seen["traced"]
	if !ok {
		t.Fatalf("the webhook did not see configmap traced; saw %v", wh.seenNames("/trace"))
	}
	if parts := strings.Split(traced.Traceparent, "-"); len(parts) != 4 || parts[1] != traceID {
		t.Errorf("the webhook call for the traced create carried traceparent %q, want trace id %s", traced.Traceparent, traceID)
	}
	if traced.Baggage != "tenant=acme" {
		t.Errorf("the webhook call for the traced create carried baggage %q, want tenant=acme", traced.Baggage)
	}
	untraced, ok := seen["untraced"]
	if !ok {
		t.Fatalf("the webhook did not see configmap untraced; saw %v", wh.seenNames("/trace"))
	}
	if untraced.Traceparent != "" || untraced.Baggage != "" {
		t.Errorf("the webhook call for a create without trace context carried traceparent %q, baggage %q; want none",
			untraced.Traceparent, untraced.Baggage)
	}
}
