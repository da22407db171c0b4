package main

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/pem"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestChartPKIKeptAcrossUpgrades: the umbrella chart's certificates,
// tokens and keys are made once and read back on an upgrade (`lookup`
// against a real Kubernetes API: a core's root workspace standing in for
// the host cluster). An upgrade to two shards keeps every key and adds
// shard b's serving certificate from the same CA; without the cluster
// (`helm template`), everything is made afresh, which is what the test
// would see if the chart stopped reading its Secrets back.
func TestChartPKIKeptAcrossUpgrades(t *testing.T) {
	root, err := framework.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	srv := framework.StartServer(t)
	cfg, err := clientcmd.LoadFromFile(srv.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg.CurrentContext = "root"
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, kubeconfig); err != nil {
		t.Fatal(err)
	}
	rc, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "meshplane-system"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	chart := chartDir(t, root)
	render := func(args ...string) map[string]*corev1.Secret {
		t.Helper()
		cmd := exec.Command(filepath.Join(root, "bin", "helm"), append([]string{"template", "mp", chart, "--namespace", "meshplane-system", "--kubeconfig", kubeconfig}, args...)...)
		cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("helm template %v: %v: %s", args, err, stderr.String())
		}
		return secretsIn(t, out)
	}

	// Install: nothing to read back yet. The Secrets go to the API.
	first := render("--dry-run=server")
	for _, s := range first {
		s.Namespace = "meshplane-system"
		if _, err := cs.CoreV1().Secrets("meshplane-system").Create(ctx, s, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	// Upgrade to two shards.
	second := render("--dry-run=server", "--set", "global.shards=2")
	for _, name := range []string{"mp-core-pki", "mp-rebac-authz-webhook-tls", "mp-openfga-key"} {
		for k, v := range first[name].Data {
			if !bytes.Equal(second[name].Data[k], v) {
				t.Errorf("upgrade changed %s key %s", name, k)
			}
		}
	}
	for _, name := range []string{"mp-admin-kubeconfig", "mp-shard-admin-kubeconfig", "mp-core-webhook-kubeconfig"} {
		if second[name].StringData["kubeconfig"] != first[name].StringData["kubeconfig"] {
			t.Errorf("upgrade changed %s", name)
		}
	}
	pki := second["mp-core-pki"].Data
	if len(pki["serving-b.crt"]) == 0 {
		t.Fatal("the upgrade made no serving certificate for shard b")
	}
	chains(t, pki["ca.crt"], pki["serving-b.crt"], "mp-core-b.meshplane-system.svc")
	if second["mp-front-proxy-pki"] == nil {
		t.Error("the upgrade to two shards made no front proxy PKI")
	}

	// Without the cluster the chart cannot read its Secrets back: all new.
	offline := render()
	if bytes.Equal(offline["mp-core-pki"].Data["ca.key"], first["mp-core-pki"].Data["ca.key"]) {
		t.Error("helm template without a cluster reproduced the CA key")
	}
}

// chartDir copies the umbrella chart with its dependencies in place (the
// component charts of the checkout) and installs the pinned helm.
func chartDir(t *testing.T, root string) string {
	t.Helper()
	if out, err := exec.Command(filepath.Join(root, "scripts", "install-helm.sh")).CombinedOutput(); err != nil {
		t.Fatalf("install-helm.sh: %v: %s", err, out)
	}
	chart := filepath.Join(t.TempDir(), "meshplane")
	if out, err := exec.Command("cp", "-r", filepath.Join(root, "charts", "meshplane"), chart).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	// Archives a local `helm dependency build` left are not the sources.
	if err := os.RemoveAll(filepath.Join(chart, "charts")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(chart, "charts"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"core", "openfga", "rebac-authz-webhook", "account-operator", "security-operator", "graphql-gateway", "examples"} {
		if out, err := exec.Command("cp", "-r", filepath.Join(root, "charts", c), filepath.Join(chart, "charts", c)).CombinedOutput(); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
	}
	return chart
}

// secretsIn are the Secrets of rendered manifests, by name.
func secretsIn(t *testing.T, manifests []byte) map[string]*corev1.Secret {
	t.Helper()
	out := map[string]*corev1.Secret{}
	r := utilyaml.NewYAMLReader(bufioReader(manifests))
	for {
		doc, err := r.Read()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal(doc, &meta); err != nil || meta.Kind != "Secret" {
			continue
		}
		s := &corev1.Secret{}
		if err := yaml.Unmarshal(doc, s); err != nil {
			t.Fatal(err)
		}
		out[s.Name] = s
	}
}

// chains: leaf is a serving certificate for host from ca.
func chains(t *testing.T, caPEM, leafPEM []byte, host string) {
	t.Helper()
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	block, _ := pem.Decode(leafPEM)
	if block == nil {
		t.Fatal("no certificate")
	}
	leaf, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: host}); err != nil {
		t.Errorf("%s: %v", host, err)
	}
}
