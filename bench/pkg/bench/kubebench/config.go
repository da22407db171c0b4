// Package kubebench measures a kcp-compatible Kubernetes API server
// (Meshplane or kcp) with client-go: configmap create/get/list latency and
// throughput inside one logical cluster, and the cost of many logical
// clusters.
package kubebench

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/meshplane/meshplane/bench/pkg/bench"
)

// DefaultContext is preferred when --context is not given: in both kcp's
// and Meshplane's admin.kubeconfig it points at the server root without a
// /clusters/ suffix.
const DefaultContext = "base"

// Target is a loaded kubeconfig context tuned for benchmarking.
type Target struct {
	Context string       // context actually used
	Base    string       // server URL without /clusters/...
	Config  *rest.Config // Host == Base
	HTTP    *http.Client // shared by all clients, one HTTP/2 connection
}

// LoadTarget reads kubeconfig, picks contextName (or DefaultContext when
// present, else the current context), strips any /clusters/<name> suffix
// from the server URL and tunes the rest.Config: no client-side rate limit,
// JSON, requestTimeout per request.
func LoadTarget(kubeconfig, contextName string, requestTimeout time.Duration) (*Target, error) {
	raw, err := clientcmd.LoadFromFile(kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("load kubeconfig: %w", err)
	}
	ctxName := contextName
	if ctxName == "" {
		if _, ok := raw.Contexts[DefaultContext]; ok {
			ctxName = DefaultContext
		} else {
			ctxName = raw.CurrentContext
		}
	}
	if ctxName == "" {
		return nil, fmt.Errorf("kubeconfig %s has no %q context and no current-context; pass --context", kubeconfig, DefaultContext)
	}
	if _, ok := raw.Contexts[ctxName]; !ok {
		names := make([]string, 0, len(raw.Contexts))
		for n := range raw.Contexts {
			names = append(names, n)
		}
		return nil, fmt.Errorf("context %q not found in %s (have: %s)", ctxName, kubeconfig, strings.Join(names, ", "))
	}
	cfg, err := clientcmd.NewNonInteractiveClientConfig(*raw, ctxName, &clientcmd.ConfigOverrides{}, nil).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("context %q: %w", ctxName, err)
	}
	base, err := bench.BaseServerURL(cfg.Host)
	if err != nil {
		return nil, err
	}
	cfg.Host = base
	Tune(cfg, requestTimeout)
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("http client: %w", err)
	}
	return &Target{Context: ctxName, Base: base, Config: cfg, HTTP: hc}, nil
}

// Tune disables client-side rate limiting and selects JSON. HTTP/2 is
// client-go's default for TLS servers (unless DISABLE_HTTP2 is set); the
// negotiated protocol is reported by the suite.
func Tune(cfg *rest.Config, requestTimeout time.Duration) {
	cfg.QPS = -1 // negative: no token-bucket rate limiter at all
	cfg.Burst = 1 << 20
	cfg.RateLimiter = nil
	cfg.ContentType = "application/json"
	cfg.AcceptContentTypes = "application/json"
	cfg.Timeout = requestTimeout
	cfg.UserAgent = "meshplane-bench"
	cfg.WarningHandler = rest.NoWarnings{}
}

// benchLabel marks every object the benchmark creates.
var benchLabel = map[string]string{"app.kubernetes.io/created-by": "meshplane-bench"}

// payloadTarget is the approximate client-side JSON size of a benchmark
// configmap.
const payloadTarget = 300

var payload = func() string {
	cm := newConfigMap("c1-000000", "")
	b, _ := json.Marshal(cm)
	n := max(payloadTarget-len(b), 16)
	return strings.Repeat("x", n)
}()

func newConfigMap(name, data string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: benchLabel},
		Data:       map[string]string{"payload": data},
	}
}

// ConfigMapJSONSize is the client-side JSON size in bytes of the configmaps
// the benchmark creates; the etcd ceiling writes values of this size.
func ConfigMapJSONSize() int {
	b, _ := json.Marshal(newConfigMap("c1-000000", payload))
	return len(b)
}
