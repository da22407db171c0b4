package admission

// A real admission webhook for the tests: an HTTPS server on 127.0.0.1
// with a CA of its own (handed to the core in caBundle), which records
// every AdmissionReview it gets and answers with a test's decision.

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// review is what the webhook saw of one call.
type review struct {
	Path      string // the URL path the core called
	Operation string
	Name      string
	Namespace string
	Resource  string
	Cluster   string // the kcp.io/cluster annotation of the reviewed object
	User      string
	// Traceparent and Baggage are the call's W3C trace-context headers.
	Traceparent string
	Baggage     string
}

// decide answers a review: allowed, a message, and an optional JSON patch.
type decide func(path string, req *admissionv1.AdmissionRequest) (allowed bool, message string, patch []map[string]any)

// webhookServer is a running HTTPS admission webhook.
type webhookServer struct {
	URL      string // base URL; hooks register URL + "/<path>"
	CABundle []byte

	mu      sync.Mutex
	reviews []review
	decide  decide
	srv     *httptest.Server
}

// startWebhook starts a webhook that answers with d, stopped at the end
// of the test.
func startWebhook(t testing.TB, d decide) *webhookServer {
	t.Helper()
	caPEM, cert := selfSignedServing(t)
	w := &webhookServer{CABundle: caPEM, decide: d}
	w.srv = httptest.NewUnstartedServer(http.HandlerFunc(w.serve))
	w.srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	w.srv.StartTLS()
	t.Cleanup(w.srv.Close)
	w.URL = w.srv.URL
	return w
}

func (w *webhookServer) serve(rw http.ResponseWriter, r *http.Request) {
	var in admissionv1.AdmissionReview
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.Request == nil {
		http.Error(rw, fmt.Sprintf("bad review: %v", err), http.StatusBadRequest)
		return
	}
	req := in.Request
	rv := review{Path: r.URL.Path, Operation: string(req.Operation), Name: req.Name, Namespace: req.Namespace,
		Resource: req.Resource.Resource, User: req.UserInfo.Username,
		Traceparent: r.Header.Get("traceparent"), Baggage: r.Header.Get("baggage")}
	raw := req.Object.Raw
	if len(raw) == 0 {
		raw = req.OldObject.Raw
	}
	var meta struct {
		Metadata metav1.ObjectMeta `json:"metadata"`
	}
	_ = json.Unmarshal(raw, &meta)
	rv.Cluster = meta.Metadata.Annotations["kcp.io/cluster"]
	if rv.Name == "" {
		rv.Name = meta.Metadata.Name
	}
	w.mu.Lock()
	w.reviews = append(w.reviews, rv)
	d := w.decide
	w.mu.Unlock()

	allowed, message, patch := d(r.URL.Path, req)
	resp := &admissionv1.AdmissionResponse{UID: req.UID, Allowed: allowed}
	if !allowed {
		resp.Result = &metav1.Status{Code: http.StatusForbidden, Message: message}
	}
	if len(patch) > 0 {
		b, _ := json.Marshal(patch)
		pt := admissionv1.PatchTypeJSONPatch
		resp.Patch, resp.PatchType = b, &pt
	}
	out := admissionv1.AdmissionReview{TypeMeta: in.TypeMeta, Response: resp}
	rw.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(rw).Encode(out)
}

// seen returns the reviews for path so far.
func (w *webhookServer) seen(path string) []review {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []review
	for _, r := range w.reviews {
		if r.Path == path {
			out = append(out, r)
		}
	}
	return out
}

// seenNames returns the object names reviewed on path.
func (w *webhookServer) seenNames(path string) []string {
	var out []string
	for _, r := range w.seen(path) {
		out = append(out, r.Name)
	}
	return out
}

// allowAll allows everything.
func allowAll(string, *admissionv1.AdmissionRequest) (bool, string, []map[string]any) {
	return true, "", nil
}

// denyPrefix denies objects whose name starts with prefix.
func denyPrefix(prefix string) decide {
	return func(_ string, req *admissionv1.AdmissionRequest) (bool, string, []map[string]any) {
		name := req.Name
		if name == "" {
			var m struct {
				Metadata metav1.ObjectMeta `json:"metadata"`
			}
			_ = json.Unmarshal(req.Object.Raw, &m)
			name = m.Metadata.Name
		}
		if strings.HasPrefix(name, prefix) {
			return false, "the test webhook refuses " + name, nil
		}
		return true, "", nil
	}
}

// selfSignedServing returns a CA (PEM) and a serving certificate it
// signed for 127.0.0.1.
func selfSignedServing(t testing.TB) ([]byte, tls.Certificate) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "admission-test-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.X509KeyPair(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}))
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), cert
}
