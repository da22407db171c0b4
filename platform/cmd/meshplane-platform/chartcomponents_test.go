package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/meshplane/meshplane/sdk/process"
	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// chartHost is the in-cluster host part the chart's URLs name.
const chartHost = ".meshplane-system.svc"

// runChartComponents starts OpenFGA, the rebac-authz-webhook, the
// security-operator and the GraphQL gateway as the chart renders them (their init containers
// first), with each in-pod path and Service address mapped to this
// machine, against the core at coreURL, and waits for each one's
// readiness. The webhook's readiness is read over TLS with the chart's CA
// and the Service's name. Then the GraphQL gateway, and `helm test`'s
// check with it.
//
// It returns the webhook's metrics URL.
func runChartComponents(ctx context.Context, t *testing.T, objs map[string]any, adminPath, credDir, coreURL string, webhookPort int) string {
	t.Helper()
	dir := t.TempDir()
	secret := func(name string) *corev1.Secret { return objs["Secret/"+name].(*corev1.Secret) }
	write := func(sub string, files map[string][]byte) string {
		d := filepath.Join(dir, sub)
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
		for name, b := range files {
			if err := os.WriteFile(filepath.Join(d, name), b, 0o440); err != nil {
				t.Fatal(err)
			}
		}
		return d
	}
	// Mounted Secrets, group-readable as a Secret volume's files are.
	key := secret("mp-openfga-key").Data["key"]
	keySecretDir := write("openfga-key-secret", map[string][]byte{"key": key})
	whTLS := secret("mp-rebac-authz-webhook-tls").Data
	tlsDir := write("tls", map[string][]byte{"ca.crt": whTLS["ca.crt"], "tls.crt": whTLS["tls.crt"], "tls.key": whTLS["tls.key"]})
	shardAdmin, err := clientcmd.Load([]byte(secret("mp-shard-admin-kubeconfig").StringData["kubeconfig"]))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range shardAdmin.Clusters {
		c.Server = coreURL
	}
	shardAdminDir := filepath.Join(dir, "shard-admin")
	if err := os.MkdirAll(shardAdminDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := clientcmd.WriteToFile(*shardAdmin, filepath.Join(shardAdminDir, "kubeconfig")); err != nil {
		t.Fatal(err)
	}
	ports, err := process.FreePorts(9)
	if err != nil {
		t.Fatal(err)
	}
	port := func(i int) string { return "127.0.0.1:" + strconv.Itoa(ports[i]) }
	fgaHTTP, fgaGRPC := port(0), port(1)
	paths := strings.NewReplacer(
		"http://mp-openfga"+chartHost+":8080", "http://"+fgaHTTP,
		"mp-openfga"+chartHost+":8081", fgaGRPC,
		"/var/lib/openfga", filepath.Join(dir, "openfga"),
		"/etc/meshplane/openfga-key", keySecretDir,
		"/run/meshplane/openfga", filepath.Join(dir, "openfga-run"),
		"/etc/meshplane/admin/kubeconfig", adminPath,
		"/etc/meshplane/shard-admin", shardAdminDir,
		"/etc/meshplane/tls", tlsDir,
		credentialMount, credDir,
	)
	if err := os.MkdirAll(filepath.Join(dir, "openfga"), 0o700); err != nil {
		t.Fatal(err)
	}
	// localArgs maps a container's arguments: paths and Services by the
	// replacer, listen addresses to the given loopback ports.
	localArgs := func(c corev1.Container, addrs map[string]string) []string {
		var out []string
		for _, a := range c.Args {
			a = paths.Replace(a)
			if i := strings.Index(a, "="); i > 0 {
				if v, ok := addrs[a[:i]]; ok {
					a = a[:i+1] + v
				}
			}
			out = append(out, a)
		}
		return out
	}
	pod := func(name string) *corev1.PodSpec {
		return &objs["Deployment/"+name].(*appsv1.Deployment).Spec.Template.Spec
	}
	start := func(name, bin string, args, env []string) *process.Process {
		cmd := exec.Command(bin, args...)
		cmd.Env = append([]string{"HOME=" + dir}, env...)
		return startLogged(t, name, cmd, 30)
	}
	binary := func(name, module, pkg string) string {
		b, err := framework.Binary(name, module, pkg)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	// keyFileInit runs a pod's key-file init container (this binary's own
	// keyFile, with the rendered arguments).
	keyFileInit := func(spec *corev1.PodSpec) {
		for _, c := range spec.InitContainers {
			args := localArgs(c, nil)
			if len(args) == 0 || args[0] != "key-file" {
				t.Fatalf("init container %s: %v", c.Name, c.Args)
			}
			if rc := keyFile(args[1:]); rc != 0 {
				t.Fatalf("init container %s exited %d", c.Name, rc)
			}
		}
	}

	// OpenFGA.
	fga := pod("mp-openfga")
	fgaBin := binary("openfga", "operators", "./cmd/openfga")
	fgaEnv := []string{"OPENFGA_AUTHN_METHOD=preshared", "OPENFGA_AUTHN_PRESHARED_KEYS=" + string(key)}
	if out, err := exec.Command(fgaBin, localArgs(fga.InitContainers[0], nil)...).CombinedOutput(); err != nil {
		t.Fatalf("openfga migrate: %v: %s", err, out)
	}
	p := start("openfga", fgaBin, localArgs(fga.Containers[0], map[string]string{"--http-addr": fgaHTTP, "--grpc-addr": fgaGRPC, "--metrics-addr": port(2)}), fgaEnv)
	if _, err := process.WaitReady(ctx, "http://"+fgaHTTP+"/healthz", 250*time.Millisecond, p.Exited()); err != nil {
		t.Fatalf("openfga: %v", err)
	}

	// The rebac-authz-webhook.
	wh := pod("mp-rebac-authz-webhook")
	keyFileInit(wh)
	whAddr := "127.0.0.1:" + strconv.Itoa(webhookPort)
	whArgs := localArgs(wh.Containers[0], map[string]string{"--bind-address": "127.0.0.1", "--secure-port": strconv.Itoa(webhookPort), "--metrics-bind-address": port(4)})
	p = start("rebac-authz-webhook", binary("rebac-authz-webhook", "webhook", "./cmd/rebac-authz-webhook"), whArgs, nil)
	if _, err := process.WaitReady(ctx, "https://"+whAddr+"/readyz", 250*time.Millisecond, p.Exited()); err != nil {
		t.Fatalf("rebac-authz-webhook: %v", err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(whTLS["ca.crt"])
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: "mp-rebac-authz-webhook" + chartHost}}}
	resp, err := hc.Get("https://" + whAddr + "/readyz")
	if err != nil {
		t.Fatalf("the webhook's serving certificate for its Service: %v", err)
	}
	resp.Body.Close()

	// The security-operator.
	so := pod("mp-security-operator")
	keyFileInit(so)
	soArgs := localArgs(so.Containers[0], map[string]string{"--metrics-bind-address": port(5), "--health-probe-bind-address": port(6)})
	p = start("security-operator", binary("security-operator", "operators", "./cmd/security-operator"), soArgs, nil)
	if _, err := process.WaitReady(ctx, "http://"+port(6)+"/readyz", 250*time.Millisecond, p.Exited()); err != nil {
		t.Fatalf("security-operator: %v", err)
	}

	// The GraphQL gateway; `helm test`'s check then passes with it too.
	gw := pod("mp-graphql-gateway")
	p = start("graphql-gateway", binary("graphql-gateway", "gateway", "./cmd/graphql-gateway"),
		localArgs(gw.Containers[0], map[string]string{"--listen": port(7)}), nil)
	if _, err := process.WaitReady(ctx, "http://"+port(7)+"/readyz", 250*time.Millisecond, p.Exited()); err != nil {
		t.Fatalf("graphql-gateway: %v", err)
	}
	base, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(&clientcmd.ClientConfigLoadingRules{ExplicitPath: adminPath},
		&clientcmd.ConfigOverrides{CurrentContext: "base"}).ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	if err := checkPlatform(ctx, base, "http://"+port(7), t.Logf); err != nil {
		t.Errorf("check with the GraphQL gateway: %v", err)
	}
	return "http://" + port(4) + "/metrics"
}
