package authzwebhook

import (
	"crypto/tls"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"

	authorizationv1 "k8s.io/api/authorization/v1"
)

// webhook is a real HTTPS authorization webhook on a fixed loopback
// address, which can be stopped and started again (the core keeps its
// URL), answer 500s, and whose decisions the tests set.
type webhook struct {
	addr   string
	dir    string
	mu     sync.Mutex
	srv    *httptest.Server
	decide func(*authorizationv1.SubjectAccessReview) authorizationv1.SubjectAccessReviewStatus
	fail   bool
	// unavailable counts the reviews still to answer with 503 and
	// Retry-After.
	unavailable int
	// hung, when not nil, holds every review until it is closed: the
	// webhook accepts and reads but never answers, as a stopped process.
	hung  chan struct{}
	seen  []authorizationv1.SubjectAccessReview
	caPEM []byte
	cert  tls.Certificate
}

// newWebhook starts the webhook on a free loopback port and writes the
// kubeconfig file the core is started with into dir.
func newWebhook(dir string) (*webhook, error) {
	w := &webhook{dir: dir, decide: noOpinion}
	// httptest's certificate is valid for 127.0.0.1; keep it across
	// restarts so the core's kubeconfig keeps trusting it.
	probe := httptest.NewTLSServer(http.NotFoundHandler())
	w.cert = probe.TLS.Certificates[0]
	w.caPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: probe.Certificate().Raw})
	probe.Close()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	w.addr = l.Addr().String()
	w.serve(l)
	if err := os.WriteFile(filepath.Join(dir, "ca.crt"), w.caPEM, 0o600); err != nil {
		return nil, err
	}
	kubeconfig := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: rebac
  cluster:
    server: https://%s/authz
    certificate-authority: %s
users:
- name: core
  user: {}
contexts:
- name: webhook
  context: {cluster: rebac, user: core}
current-context: webhook
`, w.addr, filepath.Join(dir, "ca.crt"))
	return w, os.WriteFile(w.kubeconfigPath(), []byte(kubeconfig), 0o600)
}

func (w *webhook) kubeconfigPath() string { return filepath.Join(w.dir, "webhook.kubeconfig") }

func (w *webhook) serve(l net.Listener) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(w.handle))
	srv.Listener.Close()
	srv.Listener = l
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{w.cert}}
	srv.StartTLS()
	w.mu.Lock()
	w.srv = srv
	w.mu.Unlock()
}

// stop closes the listener: the core's connections are refused.
func (w *webhook) stop() {
	w.mu.Lock()
	srv := w.srv
	w.srv = nil
	w.mu.Unlock()
	if srv != nil {
		srv.Close()
	}
}

// start listens again on the same address.
func (w *webhook) start() error {
	l, err := net.Listen("tcp", w.addr)
	if err != nil {
		return err
	}
	w.serve(l)
	return nil
}

// set replaces the decision function and clears the recorded reviews.
func (w *webhook) set(decide func(*authorizationv1.SubjectAccessReview) authorizationv1.SubjectAccessReviewStatus) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.decide = decide
	w.seen = nil
}

// setUnavailable makes the next n reviews answer 503 with Retry-After.
func (w *webhook) setUnavailable(n int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.unavailable = n
}

// hang makes the webhook hold every review without answering until
// unhang.
func (w *webhook) hang() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.hung == nil {
		w.hung = make(chan struct{})
	}
}

// unhang answers again, releasing the held reviews.
func (w *webhook) unhang() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.hung != nil {
		close(w.hung)
		w.hung = nil
	}
}

func (w *webhook) setFailing(fail bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.fail = fail
}

// reviews returns the reviews received since the last set.
func (w *webhook) reviews() []authorizationv1.SubjectAccessReview {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]authorizationv1.SubjectAccessReview(nil), w.seen...)
}

func (w *webhook) handle(rw http.ResponseWriter, r *http.Request) {
	var sar authorizationv1.SubjectAccessReview
	if err := json.NewDecoder(r.Body).Decode(&sar); err != nil {
		http.Error(rw, err.Error(), http.StatusBadRequest)
		return
	}
	if r.URL.Path == "/rules" {
		w.rulesFor(rw, &sar)
		return
	}
	w.mu.Lock()
	fail, decide, unavailable, hung := w.fail, w.decide, w.unavailable > 0, w.hung
	if unavailable {
		w.unavailable--
	}
	w.seen = append(w.seen, sar)
	w.mu.Unlock()
	if hung != nil {
		select {
		case <-hung:
		case <-r.Context().Done():
		}
		return
	}
	if unavailable {
		rw.Header().Set("Retry-After", "1")
		http.Error(rw, "cluster not known yet", http.StatusServiceUnavailable)
		return
	}
	if fail {
		http.Error(rw, "webhook failure injected by the test", http.StatusInternalServerError)
		return
	}
	sar.Status = decide(&sar)
	rw.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(rw).Encode(&sar)
}

// rulesFor answers the core's rules question: for a review of bob with
// a cluster, read access to secrets in the review's namespace.
func (w *webhook) rulesFor(rw http.ResponseWriter, sar *authorizationv1.SubjectAccessReview) {
	w.mu.Lock()
	w.seen = append(w.seen, *sar)
	w.mu.Unlock()
	out := authorizationv1.SelfSubjectRulesReview{}
	out.APIVersion, out.Kind = "authorization.k8s.io/v1", "SelfSubjectRulesReview"
	if sar.Spec.User == "bob" && len(sar.Spec.Extra["authorization.kcp.io/cluster-name"]) == 1 && sar.Spec.ResourceAttributes != nil {
		out.Status.ResourceRules = []authorizationv1.ResourceRule{{Verbs: []string{"get", "list"}, APIGroups: []string{""}, Resources: []string{"secrets"}}}
		out.Status.Incomplete = true
	}
	rw.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(rw).Encode(&out)
}

func noOpinion(*authorizationv1.SubjectAccessReview) authorizationv1.SubjectAccessReviewStatus {
	return authorizationv1.SubjectAccessReviewStatus{}
}
