package admission

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// webhookConfig is a Validating- or MutatingWebhookConfiguration with one
// webhook on configmaps (or on resources/groups given in extra's rules).
type webhookConfig struct {
	kind          string // ValidatingWebhookConfiguration or MutatingWebhookConfiguration
	name          string
	url           string
	caBundle      []byte
	failurePolicy string
	groups        string // YAML list, default [""]
	resources     string // YAML list, default ["configmaps"]
	// extra is appended to the webhook (selectors, matchConditions, timeoutSeconds).
	extra string
}

func (c webhookConfig) yaml() string {
	groups, resources, fp := c.groups, c.resources, c.failurePolicy
	if groups == "" {
		groups = `[""]`
	}
	if resources == "" {
		resources = `["configmaps"]`
	}
	if fp == "" {
		fp = "Fail"
	}
	return fmt.Sprintf(`apiVersion: admissionregistration.k8s.io/v1
kind: %s
metadata:
  name: %s
webhooks:
- name: %s.test.meshplane.io
  admissionReviewVersions: ["v1"]
  sideEffects: None
  failurePolicy: %s
  clientConfig:
    url: %q
    caBundle: %s
  rules:
  - apiGroups: %s
    apiVersions: ["*"]
    operations: ["CREATE"]
    resources: %s
%s`, c.kind, c.name, c.name, fp, c.url, base64.StdEncoding.EncodeToString(c.caBundle), groups, resources, c.extra)
}

// waitRefused creates configmaps named <prefix><n> in ns until one is
// refused with want in the error (the core's informers have the new
// configuration), and returns that error.
func waitRefused(t *testing.T, k *framework.Kubectl, ns, prefix, want string) string {
	t.Helper()
	var stderr string
	n := 0
	framework.Eventually(t, 30*time.Second, 200*time.Millisecond, "a create of "+prefix+"* to be refused with "+want, func() (bool, string) {
		n++
		_, stderr, _ = k.RunErr(t, "create", "configmap", fmt.Sprintf("%s%d", prefix, n), "-n", ns)
		return strings.Contains(stderr, want), stderr
	})
	return stderr
}

// newCluster returns a logical cluster with namespace ns.
func newCluster(t *testing.T, s *framework.Server, prefix, ns string) (string, *framework.Kubectl) {
	t.Helper()
	c, k := s.NewCluster(t, prefix)
	k.Run(t, "create", "namespace", ns)
	return c, k
}

// A validating webhook refuses creates in the cluster that registered it
// and is never called for another cluster's requests.
func TestValidatingWebhookOnlyInItsCluster(t *testing.T) {
	t.Parallel()
	s := server(t)
	wh := startWebhook(t, denyPrefix("deny-"))
	a, ka := newCluster(t, s, "adm-vwh-a", "work")
	b, kb := newCluster(t, s, "adm-vwh-b", "work")

	ka.RunStdin(t, webhookConfig{kind: "ValidatingWebhookConfiguration", name: "deny", url: wh.URL + "/deny", caBundle: wh.CABundle}.yaml(),
		"apply", "-f", "-")
	stderr := waitRefused(t, ka, "work", "deny-", "the test webhook refuses")
	framework.RequireContains(t, stderr, `admission webhook "deny.test.meshplane.io" denied the request`, "kubectl's error in "+a)
	ka.Run(t, "create", "configmap", "allowed", "-n", "work")

	// The same create in b is neither refused nor seen by the webhook.
	kb.Run(t, "create", "configmap", "deny-in-b", "-n", "work")
	kb.Run(t, "create", "configmap", "allowed-in-b", "-n", "work")
	for _, r := range wh.seen("/deny") {
		if r.Cluster != a {
			t.Errorf("webhook of %s was called for a request in cluster %q (object %s); want only %s", a, r.Cluster, r.Name, a)
		}
	}
	if !slices.Contains(wh.seenNames("/deny"), "allowed") {
		t.Errorf("webhook did not see configmap allowed of %s; saw %v", a, wh.seenNames("/deny"))
	}
	if slices.Contains(wh.seenNames("/deny"), "deny-in-b") {
		t.Errorf("webhook of %s saw configmap deny-in-b of %s", a, b)
	}
}

// A mutating webhook patches the object; the patch is stored.
func TestMutatingWebhookPatches(t *testing.T) {
	t.Parallel()
	s := server(t)
	wh := startWebhook(t, func(_ string, req *admissionv1.AdmissionRequest) (bool, string, []map[string]any) {
		return true, "", []map[string]any{{"op": "add", "path": "/metadata/labels", "value": map[string]string{"mutated-by": "webhook"}}}
	})
	_, k := newCluster(t, s, "adm-mwh", "work")
	k.RunStdin(t, webhookConfig{kind: "MutatingWebhookConfiguration", name: "label", url: wh.URL + "/label", caBundle: wh.CABundle}.yaml(),
		"apply", "-f", "-")
	n := 0
	framework.Eventually(t, 30*time.Second, 200*time.Millisecond, "a created configmap to carry the webhook's label", func() (bool, string) {
		n++
		name := fmt.Sprintf("cm-%d", n)
		k.Run(t, "create", "configmap", name, "-n", "work")
		out := k.Run(t, "get", "configmap", name, "-n", "work", "-o", "jsonpath={.metadata.labels.mutated-by}")
		return out == "webhook", "label mutated-by=" + out
	})
}

// hungURL is an https URL whose server accepts connections and never
// answers (not even the TLS handshake).
func hungURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			_ = c.Close()
		}
	})
	return "https://" + l.Addr().String() + "/hung"
}

// A webhook that never answers fails the request after its
// timeoutSeconds, not after a client-wide default; a configuration
// without timeoutSeconds reads back with kube's default, 10.
func TestHungWebhookTimesOut(t *testing.T) {
	t.Parallel()
	s := server(t)
	wh := startWebhook(t, allowAll) // only for its CA
	_, k := newCluster(t, s, "adm-hung", "work")
	hung := hungURL(t)
	k.RunStdin(t, webhookConfig{kind: "ValidatingWebhookConfiguration", name: "unset", url: hung, caBundle: wh.CABundle,
		extra: "  objectSelector:\n    matchLabels: {never: match}\n"}.yaml(), "apply", "-f", "-")
	if got := k.Run(t, "get", "validatingwebhookconfiguration", "unset", "-o", "jsonpath={.webhooks[0].timeoutSeconds}"); got != "10" {
		t.Errorf("timeoutSeconds of a webhook that sets none reads %q, want kube's default 10", got)
	}

	k.RunStdin(t, webhookConfig{kind: "ValidatingWebhookConfiguration", name: "hung", url: hung, caBundle: wh.CABundle,
		extra: "  timeoutSeconds: 2\n"}.yaml(), "apply", "-f", "-")
	n := 0
	var stderr string
	var took time.Duration
	framework.Eventually(t, 60*time.Second, 200*time.Millisecond, "a create to fail on the hung webhook", func() (bool, string) {
		n++
		start := time.Now()
		_, stderr, _ = k.RunErr(t, "create", "configmap", fmt.Sprintf("hung-%d", n), "-n", "work")
		took = time.Since(start)
		return strings.Contains(stderr, "failed calling webhook"), stderr
	})
	framework.RequireContains(t, stderr, "hung.test.meshplane.io", "the failure names the webhook")
	if took < 2*time.Second || took > 9*time.Second {
		t.Errorf("the request failed after %v, want its webhook's timeoutSeconds (2s) plus overhead", took)
	}
}

// closedURL is an https URL nothing listens on.
func closedURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return "https://" + addr + "/down"
}

// With the webhook down, failurePolicy Fail refuses the request and
// Ignore lets it through.
func TestFailurePolicyWithWebhookDown(t *testing.T) {
	t.Parallel()
	s := server(t)
	wh := startWebhook(t, allowAll) // only for its CA
	_, k := newCluster(t, s, "adm-fp", "work")
	down := closedURL(t)
	for _, fp := range []string{"Fail", "Ignore"} {
		lower := strings.ToLower(fp)
		k.RunStdin(t, webhookConfig{kind: "ValidatingWebhookConfiguration", name: lower, url: down, caBundle: wh.CABundle, failurePolicy: fp,
			extra: fmt.Sprintf("  timeoutSeconds: 2\n  objectSelector:\n    matchLabels: {policy: %s}\n", lower)}.yaml(), "apply", "-f", "-")
	}
	cm := func(name, policy string) string {
		return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: work, labels: {policy: %s}}\n", name, policy)
	}
	n := 0
	var stderr string
	framework.Eventually(t, 30*time.Second, 200*time.Millisecond, "failurePolicy Fail to refuse while the webhook is down", func() (bool, string) {
		n++
		_, stderr, _ = k.RunStdinErr(t, cm(fmt.Sprintf("fail-%d", n), "fail"), "create", "-f", "-")
		return strings.Contains(stderr, "failed calling webhook"), stderr
	})
	framework.RequireContains(t, stderr, "fail.test.meshplane.io", "the refusal names the webhook")
	k.RunStdin(t, cm("ignored", "ignore"), "create", "-f", "-")
	k.Run(t, "get", "configmap", "ignored", "-n", "work")
}

// namespaceSelector, objectSelector and matchConditions decide which
// requests reach the webhook.
func TestWebhookSelectorsAndMatchConditions(t *testing.T) {
	t.Parallel()
	s := server(t)
	wh := startWebhook(t, allowAll)
	_, k := newCluster(t, s, "adm-sel", "sel-on")
	k.Run(t, "label", "namespace", "sel-on", "adm=on")
	k.Run(t, "create", "namespace", "sel-off")
	k.RunStdin(t, webhookConfig{kind: "ValidatingWebhookConfiguration", name: "sel", url: wh.URL + "/sel", caBundle: wh.CABundle,
		extra: `  namespaceSelector:
    matchLabels: {adm: "on"}
  objectSelector:
    matchLabels: {check: "yes"}
  matchConditions:
  - name: x-prefix
    expression: "object.metadata.name.startsWith('x-')"
`}.yaml(), "apply", "-f", "-")
	cm := func(name, ns string, labeled bool) {
		labels := "{}"
		if labeled {
			labels = "{check: \"yes\"}"
		}
		k.RunStdin(t, fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: %s, labels: %s}\n", name, ns, labels), "create", "-f", "-")
	}
	n := 0
	framework.Eventually(t, 30*time.Second, 200*time.Millisecond, "the webhook to be called", func() (bool, string) {
		n++
		cm(fmt.Sprintf("x-probe-%d", n), "sel-on", true)
		return len(wh.seen("/sel")) > 0, fmt.Sprint(wh.seenNames("/sel"))
	})
	cm("x-unlabeled", "sel-on", false) // objectSelector
	cm("y-labeled", "sel-on", true)    // matchConditions
	cm("x-other-ns", "sel-off", true)  // namespaceSelector
	cm("x-last", "sel-on", true)       // called
	seen := wh.seenNames("/sel")
	if !slices.Contains(seen, "x-last") {
		t.Errorf("the webhook did not see x-last (namespace, object and condition all match); saw %v", seen)
	}
	for _, skipped := range []string{"x-unlabeled", "y-labeled", "x-other-ns"} {
		if slices.Contains(seen, skipped) {
			t.Errorf("the webhook saw %s, which its selectors or matchConditions exclude; saw %v", skipped, seen)
		}
	}
}

const cowboyCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: cowboys.wildwest.dev
spec:
  group: wildwest.dev
  scope: Namespaced
  names: {plural: cowboys, singular: cowboy, kind: Cowboy, listKind: CowboyList}
  versions:
  - name: v1alpha1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              intent: {type: string}
`

// A webhook in an APIExport's workspace is called for the export's
// resources created in a consumer workspace, and sees the consumer's
// cluster on the object.
func TestExportWebhookCalledForConsumers(t *testing.T) {
	t.Parallel()
	s := server(t)
	wh := startWebhook(t, denyPrefix("bad-"))
	org := s.CreateOrg(t, "adm-export")
	ws := s.CreateWorkspaces(t, org.Path, "provider", "consumer")
	provider, consumer := ws[0], ws[1]
	s.ExportCRD(t, provider, cowboyCRD, "wildwest.dev")
	kp := s.KubectlFor(provider.Path)
	kp.RunStdin(t, webhookConfig{kind: "ValidatingWebhookConfiguration", name: "cowboys", url: wh.URL + "/cowboys", caBundle: wh.CABundle,
		groups: `["wildwest.dev"]`, resources: `["cowboys"]`}.yaml(), "apply", "-f", "-")
	s.Bind(t, consumer, "cowboys", provider, "wildwest.dev", nil)
	kc := s.KubectlFor(consumer.Path)
	kc.Run(t, "create", "namespace", "ranch")
	cowboy := func(name string) string {
		return fmt.Sprintf("apiVersion: wildwest.dev/v1alpha1\nkind: Cowboy\nmetadata: {name: %s, namespace: ranch}\nspec: {intent: ride}\n", name)
	}
	n := 0
	var stderr string
	framework.Eventually(t, 60*time.Second, 250*time.Millisecond, "the provider's webhook to refuse a consumer's cowboy", func() (bool, string) {
		n++
		_, stderr, _ = kc.RunStdinErr(t, cowboy(fmt.Sprintf("bad-%d", n)), "create", "-f", "-")
		return strings.Contains(stderr, "the test webhook refuses"), stderr
	})
	kc.RunStdin(t, cowboy("good"), "create", "-f", "-")
	var sawGood bool
	for _, r := range wh.seen("/cowboys") {
		if r.Cluster != consumer.Cluster {
			t.Errorf("provider webhook saw %s with kcp.io/cluster %q; want the consumer's cluster %s", r.Name, r.Cluster, consumer.Cluster)
		}
		sawGood = sawGood || r.Name == "good"
	}
	if !sawGood {
		t.Errorf("provider webhook did not see the consumer's cowboy good; saw %v", wh.seenNames("/cowboys"))
	}
}

// A mutating webhook with reinvocationPolicy IfNeeded is called again when
// a later webhook changed the object, as on Kubernetes.
func TestMutatingWebhookReinvocation(t *testing.T) {
	t.Parallel()
	s := server(t)
	wh := startWebhook(t, func(path string, req *admissionv1.AdmissionRequest) (bool, string, []map[string]any) {
		var obj struct {
			Metadata struct {
				Labels map[string]string `json:"labels"`
			} `json:"metadata"`
		}
		_ = json.Unmarshal(req.Object.Raw, &obj)
		switch {
		case path == "/first" && obj.Metadata.Labels["second"] != "" && obj.Metadata.Labels["first"] == "":
			return true, "", []map[string]any{{"op": "add", "path": "/metadata/labels/first", "value": "after-second"}}
		case path == "/second" && obj.Metadata.Labels["second"] == "":
			return true, "", []map[string]any{{"op": "add", "path": "/metadata/labels/second", "value": "yes"}}
		}
		return true, "", nil
	})
	_, k := newCluster(t, s, "adm-reinvoke", "work")
	// Configurations run in name order: a-first before b-second.
	k.RunStdin(t, webhookConfig{kind: "MutatingWebhookConfiguration", name: "a-first", url: wh.URL + "/first", caBundle: wh.CABundle,
		extra: "  reinvocationPolicy: IfNeeded\n"}.yaml(), "apply", "-f", "-")
	k.RunStdin(t, webhookConfig{kind: "MutatingWebhookConfiguration", name: "b-second", url: wh.URL + "/second", caBundle: wh.CABundle}.yaml(),
		"apply", "-f", "-")
	n := 0
	framework.Eventually(t, 30*time.Second, 200*time.Millisecond, "the first webhook to be reinvoked after the second", func() (bool, string) {
		n++
		name := fmt.Sprintf("cm-%d", n)
		k.RunStdin(t, fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: work, labels: {start: x}}\n", name), "create", "-f", "-")
		out := k.Run(t, "get", "configmap", name, "-n", "work", "-o", "jsonpath={.metadata.labels.first}/{.metadata.labels.second}")
		return out == "after-second/yes", "labels first/second: " + out
	})
}

// A webhook configuration that could never be called is refused, as
// kube-apiserver refuses it.
func TestInvalidWebhookConfigurationRefused(t *testing.T) {
	t.Parallel()
	s := server(t)
	_, k := newCluster(t, s, "adm-invalid", "work")
	cfg := strings.Replace(webhookConfig{kind: "ValidatingWebhookConfiguration", name: "bad", url: "http://127.0.0.1:1/x", caBundle: []byte("x")}.yaml(),
		"  sideEffects: None\n", "", 1)
	stdout, stderr, err := k.RunStdinErr(t, cfg, "create", "-f", "-")
	framework.RequireFails(t, stdout, stderr, err, "creating a webhook configuration without sideEffects and with an http URL",
		"webhooks[0].sideEffects: Required value", "'https' is the only allowed URL scheme")
}
