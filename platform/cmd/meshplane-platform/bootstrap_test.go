package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
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
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"github.com/meshplane/meshplane/platform/launcher"
	"github.com/meshplane/meshplane/sdk/process"
	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestChartPlatformBootstrap runs what the Helm chart installs, short of a
// cluster: the core with the arguments and the certificates, tokens and
// service-account key the umbrella chart renders (so the core accepts
// what Helm's template functions make), the chart's admin kubeconfig,
// then the bootstrap's InCluster setup and the credential Secrets'
// content; the account-operator's credential works in its provider
// workspace and is refused in root, and the account-operator gets ready
// with the chart's arguments and that credential; the example providers
// are set up (the mongodb one runs as rendered), then OpenFGA, the
// webhook, the security-operator and the GraphQL gateway
// (chartcomponents_test.go).
func TestChartPlatformBootstrap(t *testing.T) {
	root, err := framework.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	objs := renderChart(t, root, "--set", "examples.enabled=true", "--set", "examples.postgres.dsnSecret.name=pg")
	for _, want := range []string{"Secret/mp-core-pki", "Secret/mp-admin-kubeconfig", "Secret/mp-shard-admin-kubeconfig", "Secret/mp-openfga-key",
		"Secret/mp-rebac-authz-webhook-tls", "StatefulSet/mp-core", "Deployment/mp-account-operator", "Deployment/mp-openfga",
		"Deployment/mp-rebac-authz-webhook", "Deployment/mp-security-operator", "Deployment/mp-graphql-gateway"} {
		if objs[want] == nil {
			t.Fatalf("the chart rendered no %s", want)
		}
	}
	pki := objs["Secret/mp-core-pki"].(*corev1.Secret).Data
	sts := objs["StatefulSet/mp-core"].(*appsv1.StatefulSet)

	dir := t.TempDir()
	files := map[string][]byte{"ca.crt": pki["ca.crt"], "ca.key": pki["ca.key"], "admin-tokens": pki["admin-tokens"],
		"service-account.key": pki["service-account.key"], "apiserver.crt": pki["serving-root.crt"], "apiserver.key": pki["serving-root.key"]}
	for name, b := range files {
		if len(b) == 0 {
			t.Fatalf("the chart's core PKI has no %s", name)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ports, err := process.FreePorts(4)
	if err != nil {
		t.Fatal(err)
	}
	// The core asks the webhook (started later, as in the cluster) through
	// the chart's kubeconfig, at localhost (a name its certificate holds).
	webhookKC, err := clientcmd.Load([]byte(objs["Secret/mp-core-webhook-kubeconfig"].(*corev1.Secret).StringData["kubeconfig"]))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range webhookKC.Clusters {
		c.Server = fmt.Sprintf("https://localhost:%d/authz", ports[3])
	}
	webhookKCPath := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*webhookKC, webhookKCPath); err != nil {
		t.Fatal(err)
	}
	// The rendered arguments, on this machine's loopback and ports (the
	// Service's DNS name, which the URLs the core hands out name, does not
	// resolve here).
	var args []string
	for _, a := range sts.Spec.Template.Spec.Containers[0].Args {
		switch {
		case strings.HasPrefix(a, "--authorization-webhook-config-file="):
			a = "--authorization-webhook-config-file=" + webhookKCPath
		case strings.HasPrefix(a, "--root-directory="),
			strings.HasPrefix(a, "--bind-address="), strings.HasPrefix(a, "--secure-port="),
			strings.HasPrefix(a, "--external-hostname="), strings.HasPrefix(a, "--shard-base-url="):
			continue
		}
		args = append(args, a)
	}
	hostPort := "127.0.0.1:" + strconv.Itoa(ports[0])
	args = append(args, "--root-directory="+dir, "--bind-address=127.0.0.1", "--secure-port="+strconv.Itoa(ports[0]),
		"--external-hostname="+hostPort, "--shard-base-url=https://"+hostPort,
		"--embedded-etcd-client-port="+strconv.Itoa(ports[1]), "--embedded-etcd-peer-port="+strconv.Itoa(ports[2]))
	bin, err := framework.MeshplaneBinary()
	if err != nil {
		t.Fatal(err)
	}
	core := startLogged(t, "core", exec.Command(bin, args...), 40)
	url := fmt.Sprintf("https://127.0.0.1:%d", ports[0])
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	if _, err := process.WaitReady(ctx, url+"/readyz", 250*time.Millisecond, core.Exited()); err != nil {
		t.Fatalf("the core did not get ready with the chart's PKI: %v", err)
	}

	// The chart's admin kubeconfig, with the server on this machine.
	admin := objs["Secret/mp-admin-kubeconfig"].(*corev1.Secret).StringData["kubeconfig"]
	cfg, err := clientcmd.Load([]byte(admin))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cfg.Clusters {
		c.Server = url + strings.TrimPrefix(c.Server, "https://mp-core.meshplane-system.svc.cluster.local:6443")
	}
	adminPath := filepath.Join(t.TempDir(), "admin.kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, adminPath); err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	// The examples' manifests as the chart's ConfigMap lays them out
	// (<name>/config/...; TestExampleManifestsInSync keeps them equal).
	examples := []string{"mongodb", "postgres"}
	ic := &launcher.InCluster{AdminKubeconfig: adminPath, Dir: work, TokenTTL: time.Hour, Logf: t.Logf,
		Examples: examples, ExamplesDir: filepath.Join(root, "examples")}
	if err := ic.Run(ctx); err != nil {
		t.Fatal(err)
	}
	// Idempotent: a second run (an upgrade, a restarted bootstrap) changes nothing and succeeds.
	if err := ic.Run(ctx); err != nil {
		t.Fatalf("second run: %v", err)
	}

	// `helm test`'s check passes on the bootstrapped platform.
	if err := checkPlatform(ctx, adminConfig(t, adminPath), "", t.Logf); err != nil {
		t.Errorf("check: %v", err)
	}

	// The Secrets' content: the kubeconfig names the mounted token file.
	s := &secretSync{dir: work, names: credentialNames(examples)}
	for _, name := range s.names {
		data, err := s.credential(name)
		if err != nil {
			t.Fatal(err)
		}
		kc, err := clientcmd.Load(data["kubeconfig"])
		if err != nil {
			t.Fatal(err)
		}
		for _, ai := range kc.AuthInfos {
			if ai.TokenFile != credentialMount+"/token" || ai.Token != "" {
				t.Errorf("%s: tokenFile %q, inline token %v", name, ai.TokenFile, ai.Token != "")
			}
		}
		if len(data["token"]) == 0 {
			t.Errorf("%s: no token", name)
		}
	}

	// The Secrets written to a Kubernetes API (the core's own, its root
	// workspace standing in for the host cluster's namespace), owned by a
	// ServiceAccount, and rewritten when a token changes.
	checkSecretSync(ctx, t, adminConfig(t, adminPath), s)

	// The account-operator's credential reads its export's endpoint slice,
	// and is refused the root workspace's Secrets.
	data, err := s.credential("account-operator")
	if err != nil {
		t.Fatal(err)
	}
	kc, err := clientcmd.Load(data["kubeconfig"])
	if err != nil {
		t.Fatal(err)
	}
	for _, ai := range kc.AuthInfos {
		ai.TokenFile = filepath.Join(work, "account-operator.token")
	}
	rc, err := clientcmd.NewDefaultClientConfig(*kc, nil).ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	slices := schema.GroupVersionResource{Group: "apis.kcp.io", Version: "v1alpha1", Resource: "apiexportendpointslices"}
	if _, err := dyn.Resource(slices).Get(ctx, "core.platform-mesh.io", metav1.GetOptions{}); err != nil {
		t.Errorf("the account-operator's credential cannot read its endpoint slice: %v", err)
	}
	rootCfg := *rc
	rootCfg.Host = url + "/clusters/root"
	cs, err := kubernetes.NewForConfig(&rootCfg)
	if err != nil {
		t.Fatal(err)
	}
	// A ServiceAccount's token counts in its own workspace only.
	if _, err := cs.CoreV1().Secrets("default").List(ctx, metav1.ListOptions{}); !apierrors.IsUnauthorized(err) && !apierrors.IsForbidden(err) {
		t.Errorf("the account-operator's credential listing Secrets in root: %v, want a refusal", err)
	}

	// The account-operator runs with the chart's arguments and the
	// credential Secret's files where the chart mounts them, and gets ready.
	credDir := writeCredential(t, s, "account-operator")
	op := objs["Deployment/mp-account-operator"].(*appsv1.Deployment).Spec.Template.Spec.Containers[0]
	opPorts, err := process.FreePorts(2)
	if err != nil {
		t.Fatal(err)
	}
	health := "127.0.0.1:" + strconv.Itoa(opPorts[1])
	var opArgs []string
	for _, a := range op.Args {
		a = strings.ReplaceAll(a, credentialMount, credDir)
		switch {
		case strings.HasPrefix(a, "--metrics-bind-address="):
			a = "--metrics-bind-address=127.0.0.1:" + strconv.Itoa(opPorts[0])
		case strings.HasPrefix(a, "--health-probe-bind-address="):
			a = "--health-probe-bind-address=" + health
		}
		opArgs = append(opArgs, a)
	}
	opBin, err := framework.Binary("account-operator", "operators", "./cmd/account-operator")
	if err != nil {
		t.Fatal(err)
	}
	operator := startLogged(t, "account-operator", exec.Command(opBin, opArgs...), 30)
	if _, err := process.WaitReady(ctx, "http://"+health+"/readyz", 250*time.Millisecond, operator.Exited()); err != nil {
		t.Fatalf("the account-operator did not get ready with the chart's arguments and credential: %v", err)
	}

	// The mongodb example provider as rendered, with its credential and
	// its downstream kubeconfig.
	runMongoDBProvider(ctx, t, objs, writeCredential(t, s, "mongodb-provider"), filepath.Join(work, "mongodb-downstream.kubeconfig"))

	// OpenFGA, the rebac-authz-webhook and the security-operator as rendered.
	webhookMetrics := runChartComponents(ctx, t, objs, adminPath, writeCredential(t, s, "security-operator"), url, ports[3])

	// A request RBAC does not allow goes to the webhook: the core
	// presents the chart's client certificate, which the webhook takes.
	opCfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(credDir, "kubeconfig"))
	if err != nil {
		t.Fatal(err)
	}
	ocs, err := kubernetes.NewForConfig(opCfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ocs.CoreV1().ConfigMaps("kube-system").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("the account-operator listing ConfigMaps of kube-system in its workspace: %v, want Forbidden", err)
	}
	resp, err := http.Get(webhookMetrics)
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !reviewsCounted(string(metrics)) {
		t.Errorf("the webhook counted no review from the core:\n%s", grepLines(string(metrics), "rebac_authz_reviews_total"))
	}
}

// reviewsCounted: rebac_authz_reviews_total has a non-zero sample.
func reviewsCounted(metrics string) bool {
	for _, l := range strings.Split(metrics, "\n") {
		if strings.HasPrefix(l, "rebac_authz_reviews_total{") && !strings.HasSuffix(l, " 0") {
			return true
		}
	}
	return false
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// checkSecretSync runs s against the root workspace of the core at base:
// the credential Secrets appear with their kubeconfig and token, owned by
// a ServiceAccount; a renewed token is written again, an unchanged one is
// not.
func checkSecretSync(ctx context.Context, t *testing.T, base *rest.Config, s *secretSync) {
	t.Helper()
	cfg := rest.CopyConfig(base)
	cfg.Host = strings.TrimSuffix(base.Host, "/") + "/clusters/root"
	hc, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	sa, err := hc.CoreV1().ServiceAccounts("default").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "mp-bootstrap"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sync := &secretSync{client: hc, namespace: "default", prefix: "mp", dir: s.dir, names: s.names,
		owner: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ServiceAccount", Name: sa.Name, UID: sa.UID}}}
	if err := sync.sync(ctx); err != nil {
		t.Fatal(err)
	}
	read := func(name string) *corev1.Secret {
		sec, err := hc.CoreV1().Secrets("default").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return sec
	}
	for _, name := range s.names {
		sec := read("mp-" + name + "-credential")
		if len(sec.Data["kubeconfig"]) == 0 || len(sec.Data["token"]) == 0 {
			t.Errorf("Secret mp-%s-credential: keys %v", name, keysOf(sec.Data))
		}
		if len(sec.OwnerReferences) != 1 || sec.OwnerReferences[0].UID != sa.UID {
			t.Errorf("Secret mp-%s-credential: owners %v", name, sec.OwnerReferences)
		}
	}
	if sec := read("mp-mongodb-downstream-kubeconfig"); len(sec.Data["kubeconfig"]) == 0 {
		t.Error("no downstream kubeconfig")
	}
	before := read("mp-account-operator-credential").ResourceVersion
	if err := sync.sync(ctx); err != nil {
		t.Fatal(err)
	}
	if after := read("mp-account-operator-credential").ResourceVersion; after != before {
		t.Errorf("an unchanged credential was written again (%s -> %s)", before, after)
	}
	// A renewed token (the launcher's TokenFile writes the file) reaches the Secret.
	tokenPath := filepath.Join(s.dir, "account-operator.token")
	old, err := os.ReadFile(tokenPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.WriteFile(tokenPath, old, 0o600) })
	if err := os.WriteFile(tokenPath, []byte("renewed-token"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := sync.sync(ctx); err != nil {
		t.Fatal(err)
	}
	if got := string(read("mp-account-operator-credential").Data["token"]); got != "renewed-token" {
		t.Errorf("token after renewal: %q", got)
	}
	if err := os.WriteFile(tokenPath, old, 0o600); err != nil {
		t.Fatal(err)
	}
}

func keysOf(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// runMongoDBProvider starts the mongodb example provider from its rendered
// Deployment and waits for its readiness.
func runMongoDBProvider(ctx context.Context, t *testing.T, objs map[string]any, credDir, downstream string) {
	t.Helper()
	c := objs["Deployment/mp-mongodb-provider"].(*appsv1.Deployment).Spec.Template.Spec.Containers[0]
	ports, err := process.FreePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	health := "127.0.0.1:" + strconv.Itoa(ports[0])
	var args []string
	for _, a := range c.Args {
		a = strings.ReplaceAll(a, credentialMount, credDir)
		a = strings.ReplaceAll(a, "/var/run/meshplane/downstream/kubeconfig", downstream)
		if strings.HasPrefix(a, "--health-probe-bind-address=") {
			a = "--health-probe-bind-address=" + health
		}
		args = append(args, a)
	}
	bin, err := framework.Binary("mongodb-provider", "examples", "./mongodb/cmd/mongodb-provider")
	if err != nil {
		t.Fatal(err)
	}
	p := startLogged(t, "mongodb-provider", exec.Command(bin, args...), 30)
	if _, err := process.WaitReady(ctx, "http://"+health+"/readyz", 250*time.Millisecond, p.Exited()); err != nil {
		t.Fatalf("mongodb-provider: %v", err)
	}
}

// writeCredential writes credential name's Secret files (kubeconfig,
// token) into a directory, as the chart mounts them, with the kubeconfig's
// token file there.
func writeCredential(t *testing.T, s *secretSync, name string) string {
	t.Helper()
	data, err := s.credential(name)
	if err != nil {
		t.Fatal(err)
	}
	kc, err := clientcmd.Load(data["kubeconfig"])
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, ai := range kc.AuthInfos {
		ai.TokenFile = filepath.Join(dir, "token")
	}
	if err := clientcmd.WriteToFile(*kc, filepath.Join(dir, "kubeconfig")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "token"), data["token"], 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// renderChart renders the umbrella chart (dependencies copied in place)
// with the pinned helm of bin/ and returns its objects by Kind/name.
func renderChart(t *testing.T, root string, args ...string) map[string]any {
	t.Helper()
	helm := filepath.Join(root, "bin", "helm")
	chart := chartDir(t, root)
	cmd := exec.Command(helm, append([]string{"template", "mp", chart, "--namespace", "meshplane-system"}, args...)...)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("helm template: %v", err)
	}
	objs := map[string]any{}
	r := utilyaml.NewYAMLReader(bufioReader(out))
	for {
		doc, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal(doc, &meta); err != nil || meta.Kind == "" {
			continue
		}
		var obj any
		switch meta.Kind {
		case "Secret":
			obj = &corev1.Secret{}
		case "StatefulSet":
			obj = &appsv1.StatefulSet{}
		case "Deployment":
			obj = &appsv1.Deployment{}
		default:
			continue
		}
		if err := yaml.Unmarshal(doc, obj); err != nil {
			t.Fatal(err)
		}
		objs[meta.Kind+"/"+obj.(metav1.Object).GetName()] = obj
	}
	return objs
}

func adminConfig(t *testing.T, path string) *rest.Config {
	t.Helper()
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(&clientcmd.ClientConfigLoadingRules{ExplicitPath: path},
		&clientcmd.ConfigOverrides{CurrentContext: "base"}).ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

func bufioReader(b []byte) *bufio.Reader { return bufio.NewReader(bytes.NewReader(b)) }
