package charts

import (
	"crypto/x509"
	"encoding/pem"
	"k8s.io/apimachinery/pkg/api/resource"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/clientcmd"
)

// matrix is the set of values the umbrella chart is rendered with.
var matrix = []struct {
	name string
	args []string
	// want are objects (Kind/name) the case must render, absent ones it must not.
	want, absent []string
}{
	{name: "small-values-two-shards", args: []string{"-f", "values-small.yaml", "--set", "global.shards=2", "--set", "examples.enabled=true", "--set", "examples.postgres.dsnSecret.name=pg"},
		want: []string{"StatefulSet/mp-core-b", "Deployment/mp-front-proxy"}},
	{name: "single-shard",
		want:   []string{"StatefulSet/mp-core", "Deployment/mp-openfga", "Deployment/mp-bootstrap", "Deployment/mp-rebac-authz-webhook", "Deployment/mp-graphql-gateway"},
		absent: []string{"Deployment/mp-front-proxy", "StatefulSet/mp-core-b", "Deployment/mp-mongodb-provider"}},
	{name: "two-shards-front-proxy", args: []string{"--set", "global.shards=2"},
		want: []string{"StatefulSet/mp-core", "StatefulSet/mp-core-b", "Deployment/mp-front-proxy", "Secret/mp-front-proxy-pki"}},
	{name: "four-shards", args: []string{"--set", "global.shards=4"},
		want: []string{"StatefulSet/mp-core-c", "StatefulSet/mp-core-d", "Deployment/mp-front-proxy"}},
	{name: "external-etcd", args: []string{"--set", "core.etcd.external.enabled=true",
		"--set", "core.etcd.external.servers={https://etcd-0.etcd:2379,https://etcd-1.etcd:2379}", "--set", "core.etcd.external.secretName=etcd-client"},
		want: []string{"StatefulSet/mp-core"}},
	{name: "postgres-openfga", args: []string{"--set", "openfga.datastore.engine=postgres", "--set", "openfga.datastore.postgres.uriSecret.name=openfga-db",
		"--set", "openfga.replicas=3"},
		want: []string{"Deployment/mp-openfga", "PodDisruptionBudget/mp-openfga"}, absent: []string{"PersistentVolumeClaim/mp-openfga-data"}},
	{name: "external-openfga", args: []string{"--set", "openfga.enabled=false", "--set", "global.openfga.url=https://fga.example.com",
		"--set", "global.openfga.keySecret.name=fga-key"},
		absent: []string{"Deployment/mp-openfga", "Secret/mp-openfga-key"}},
	{name: "examples-on", args: []string{"--set", "examples.enabled=true", "--set", "examples.postgres.dsnSecret.name=pg"},
		want: []string{"Deployment/mp-mongodb-provider", "Deployment/mp-postgres-provider", "ConfigMap/mp-examples-manifests"}},
	{name: "examples-mongodb-only", args: []string{"--set", "examples.enabled=true", "--set", "examples.providers={mongodb}"},
		want: []string{"Deployment/mp-mongodb-provider"}, absent: []string{"Deployment/mp-postgres-provider"}},
	{name: "oidc-audit", args: []string{"--set", "core.oidc.enabled=true", "--set", "core.audit.enabled=true",
		"--set-json", `core.oidc.authenticationConfiguration={"apiVersion":"apiserver.config.k8s.io/v1beta1","kind":"AuthenticationConfiguration","jwt":[{"issuer":{"url":"https://issuer.example.com","audiences":["meshplane"]},"claimMappings":{"username":{"claim":"sub","prefix":"oidc:"}}}]}`},
		want: []string{"ConfigMap/mp-core-oidc"}},
	{name: "cert-manager-two-shards", args: []string{"--set", "global.shards=2", "--set", "core.certManager.enabled=true", "--set", "core.certManager.renewBefore=720h"},
		want: []string{"Issuer/mp-core-ca", "Secret/mp-core-ca", "Certificate/mp-core-serving", "Certificate/mp-core-b-serving"}},
	{name: "cert-manager-cluster-issuer", args: []string{"--set", "core.certManager.enabled=true", "--set", "core.certManager.issuerRef.name=letsencrypt",
		"--set", "core.certManager.issuerRef.kind=ClusterIssuer"},
		want: []string{"Certificate/mp-core-serving"}, absent: []string{"Issuer/mp-core-ca", "Secret/mp-core-ca"}},
	{name: "everything-with-servicemonitors", args: []string{"--set", "global.shards=3", "--set", "core.oidc.enabled=true",
		"--set-json", `core.oidc.authenticationConfiguration={"apiVersion":"apiserver.config.k8s.io/v1beta1","kind":"AuthenticationConfiguration"}`,
		"--set", "core.audit.enabled=true", "--set", "openfga.datastore.engine=postgres", "--set", "openfga.datastore.postgres.uriSecret.name=db",
		"--set", "examples.enabled=true", "--set", "examples.postgres.dsnSecret.name=pg", "--set", "core.featureGates.WatchList=true",
		"--set", "core.mounts.allowedHosts={10.0.0.0/8}", "--set", "core.persistence.keepOnUninstall=false",
		"--set", "openfga.limits.requestTimeout=3s", "--set", "openfga.cache.checkCacheLimit=20000",
		"--set", "graphqlGateway.limits.maxDepth=12", "--set", "accountOperator.workers=8", "--set", "securityOperator.workers=4", "--set", "securityOperator.organizationStores=per-organization",
		"--set", "rebacAuthzWebhook.decisionCacheTTL=2s", "--set", "global.image.tag=1.2.3", "--set", "core.image.digest=sha256:" + strings.Repeat("ab", 32),
		"--api-versions", "monitoring.coreos.com/v1/ServiceMonitor"},
		want: []string{"ServiceMonitor/mp-openfga", "ServiceMonitor/mp-front-proxy", "ServiceMonitor/mp-account-operator", "StatefulSet/mp-core-c"}},
}

// TestRenderMatrix renders the umbrella chart over the matrix: every
// object decodes strictly into its Kubernetes type, and every container's
// arguments are accepted by the binary it runs.
func TestRenderMatrix(t *testing.T) {
	chart := umbrellaDir(t)
	for _, tc := range matrix {
		t.Run(tc.name, func(t *testing.T) {
			args := slices.Clone(tc.args)
			for i, a := range args {
				if i > 0 && args[i-1] == "-f" {
					args[i] = filepath.Join(chart, a) // a values file of the umbrella chart
				}
			}
			out, err := render(t, chart, args...)
			if err != nil {
				t.Fatal(err)
			}
			objs, err := decodeStrict(out)
			if err != nil {
				t.Fatal(err)
			}
			have := map[string]bool{}
			for _, o := range objs {
				key := o.Kind + "/" + o.Name
				if have[key] {
					t.Errorf("%s rendered twice", key)
				}
				have[key] = true
			}
			for _, w := range tc.want {
				if !have[w] {
					t.Errorf("%s not rendered", w)
				}
			}
			for _, a := range tc.absent {
				if have[a] {
					t.Errorf("%s rendered", a)
				}
			}
			checkProductionShape(t, objs)
			checkKubeconfigs(t, objs)
			for _, err := range checkPaths(objs) {
				t.Error(err)
			}
			for _, err := range checkSelectors(objs) {
				t.Error(err)
			}
			for _, err := range checkAllArgs(t, objs) {
				t.Error(err)
			}
		})
	}
}

// checkProductionShape: every container is non-root on a read-only root
// filesystem without privilege escalation or capabilities, has resources
// and probes (init containers and the helm test pod: none), every image is
// pinned to a tag.
func checkProductionShape(t *testing.T, objs []object) {
	t.Helper()
	for name, spec := range podSpecs(objs) {
		psc := spec.SecurityContext
		if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
			t.Errorf("%s: pod securityContext %+v", name, psc)
		}
		all := append(append([]corev1.Container{}, spec.InitContainers...), spec.Containers...)
		for i, c := range all {
			sc := c.SecurityContext
			if sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
				sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) {
				t.Errorf("%s/%s: securityContext %+v", name, c.Name, sc)
			}
			if c.Resources.Requests.Memory().IsZero() || c.Resources.Limits.Memory().IsZero() {
				t.Errorf("%s/%s: no memory request and limit", name, c.Name)
			}
			if !strings.Contains(c.Image[strings.LastIndex(c.Image, "/")+1:], ":") {
				t.Errorf("%s/%s: image %s has no tag", name, c.Name, c.Image)
			}
			// Long-running containers only: not init containers, not a test pod.
			if i >= len(spec.InitContainers) && !strings.HasPrefix(name, "Pod/") && (c.ReadinessProbe == nil || c.LivenessProbe == nil) {
				t.Errorf("%s/%s: no readiness or liveness probe", name, c.Name)
			}
		}
	}
}

// checkKubeconfigs: every kubeconfig the charts make loads.
func checkKubeconfigs(t *testing.T, objs []object) {
	t.Helper()
	for _, o := range objs {
		s, ok := o.Obj.(*corev1.Secret)
		if !ok {
			continue
		}
		for k, v := range s.StringData {
			if k != "kubeconfig" {
				continue
			}
			cfg, err := clientcmd.Load([]byte(v))
			if err != nil {
				t.Errorf("Secret %s: %v", s.Name, err)
				continue
			}
			if _, err := clientcmd.NewDefaultClientConfig(*cfg, nil).ClientConfig(); err != nil {
				t.Errorf("Secret %s: %v", s.Name, err)
			}
		}
	}
}

// TestPKI: the certificates chain as the components need them: each
// shard's serving certificate names its Service, the front proxy's client
// certificate is meshplane-front-proxy from the request-header CA, the
// core's webhook client certificate is meshplane-core from the webhook CA.
func TestPKI(t *testing.T) {
	out, err := render(t, umbrellaDir(t), "--set", "global.shards=2", "--set", "core.externalHostname=meshplane.example.com:443",
		"--set", "core.extraSANs={10.244.0.1,api.example.com}")
	if err != nil {
		t.Fatal(err)
	}
	objs, err := decodeStrict(out)
	if err != nil {
		t.Fatal(err)
	}
	core := find[*corev1.Secret](t, objs, "Secret", "mp-core-pki").Data
	verify(t, core["ca.crt"], core["serving-root.crt"], "mp-core.meshplane-system.svc", x509.ExtKeyUsageServerAuth)
	verify(t, core["ca.crt"], core["serving-root.crt"], "meshplane.example.com", x509.ExtKeyUsageServerAuth)
	verify(t, core["ca.crt"], core["serving-b.crt"], "mp-core-b.meshplane-system.svc.cluster.local", x509.ExtKeyUsageServerAuth)
	// extraSANs: an IP address is an IP SAN (clients reaching a node address verify it), a name a DNS SAN.
	verify(t, core["ca.crt"], core["serving-root.crt"], "10.244.0.1", x509.ExtKeyUsageServerAuth)
	verify(t, core["ca.crt"], core["serving-b.crt"], "api.example.com", x509.ExtKeyUsageServerAuth)
	if tokens := strings.Fields(string(core["admin-tokens"])); len(tokens) != 2 || tokens[0] == tokens[1] {
		t.Errorf("admin-tokens: want two distinct tokens, got %d", len(tokens))
	}
	fp := find[*corev1.Secret](t, objs, "Secret", "mp-front-proxy-pki").Data
	verify(t, fp["serving-ca.crt"], fp["tls.crt"], "mp-front-proxy.meshplane-system.svc", x509.ExtKeyUsageServerAuth)
	if cn := verify(t, fp["requestheader-ca.crt"], fp["proxy-client.crt"], "", x509.ExtKeyUsageClientAuth); cn != "meshplane-front-proxy" {
		t.Errorf("proxy client certificate CN %q", cn)
	}
	w := find[*corev1.Secret](t, objs, "Secret", "mp-rebac-authz-webhook-tls").Data
	verify(t, w["ca.crt"], w["tls.crt"], "mp-rebac-authz-webhook.meshplane-system.svc", x509.ExtKeyUsageServerAuth)
	if cn := verify(t, w["ca.crt"], w["core-client.crt"], "", x509.ExtKeyUsageClientAuth); cn != "meshplane-core" {
		t.Errorf("core's webhook client certificate CN %q", cn)
	}
	// The core reaches the webhook at its Service with that certificate.
	kc, err := clientcmd.Load([]byte(find[*corev1.Secret](t, objs, "Secret", "mp-core-webhook-kubeconfig").StringData["kubeconfig"]))
	if err != nil {
		t.Fatal(err)
	}
	if got := kc.Clusters["rebac-authz-webhook"].Server; got != "https://mp-rebac-authz-webhook.meshplane-system.svc.cluster.local:9443/authz" {
		t.Errorf("webhook URL %s", got)
	}
	// The root shard names the external host name.
	sts := find[*appsv1.StatefulSet](t, objs, "StatefulSet", "mp-core")
	if !slices.Contains(sts.Spec.Template.Spec.Containers[0].Args, "--external-hostname=meshplane.example.com:443") {
		t.Errorf("root shard args %v", sts.Spec.Template.Spec.Containers[0].Args)
	}
}

// verify checks that leaf chains to ca for usage (and host, when set) and
// returns its common name.
func verify(t *testing.T, caPEM, leafPEM []byte, host string, usage x509.ExtKeyUsage) string {
	t.Helper()
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		t.Fatal("no CA certificate")
	}
	block, _ := pem.Decode(leafPEM)
	if block == nil {
		t.Fatal("no certificate")
	}
	leaf, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: host, KeyUsages: []x509.ExtKeyUsage{usage}}); err != nil {
		t.Errorf("%s: %v", leaf.Subject.CommonName, err)
	}
	return leaf.Subject.CommonName
}

// TestEveryPodHasTmp: every long-running container has a writable /tmp
// (the root filesystem is read-only).
func TestEveryPodHasTmp(t *testing.T) {
	out, err := render(t, umbrellaDir(t), "--set", "global.shards=2", "--set", "examples.enabled=true", "--set", "examples.postgres.dsnSecret.name=pg")
	if err != nil {
		t.Fatal(err)
	}
	objs, err := decodeStrict(out)
	if err != nil {
		t.Fatal(err)
	}
	for name, spec := range podSpecs(objs) {
		if strings.HasPrefix(name, "Pod/") {
			continue
		}
		for _, c := range spec.Containers {
			if !slices.ContainsFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return m.MountPath == "/tmp" }) {
				t.Errorf("%s/%s has no /tmp", name, c.Name)
			}
		}
	}
}

// TestSmallValuesFitTwoCPUs: values-small.yaml's platform, two shards and
// the examples included, asks for less than one CPU and 2 GiB in total,
// so it schedules on a two-CPU test node next to the cluster itself.
func TestSmallValuesFitTwoCPUs(t *testing.T) {
	chart := umbrellaDir(t)
	out, err := render(t, chart, "-f", filepath.Join(chart, "values-small.yaml"), "--set", "global.shards=2",
		"--set", "examples.enabled=true", "--set", "examples.postgres.dsnSecret.name=pg")
	if err != nil {
		t.Fatal(err)
	}
	objs, err := decodeStrict(out)
	if err != nil {
		t.Fatal(err)
	}
	cpu, mem := resource.Quantity{}, resource.Quantity{}
	for _, o := range objs {
		var spec *corev1.PodSpec
		replicas := int32(1)
		switch w := o.Obj.(type) {
		case *appsv1.Deployment:
			spec, replicas = &w.Spec.Template.Spec, *w.Spec.Replicas
		case *appsv1.StatefulSet:
			spec, replicas = &w.Spec.Template.Spec, *w.Spec.Replicas
		default:
			continue
		}
		for range replicas {
			for _, c := range spec.Containers {
				cpu.Add(*c.Resources.Requests.Cpu())
				mem.Add(*c.Resources.Requests.Memory())
			}
		}
	}
	t.Logf("requests: cpu %s, memory %s", cpu.String(), mem.String())
	if cpu.Cmp(resource.MustParse("1")) >= 0 || mem.Cmp(resource.MustParse("2Gi")) >= 0 {
		t.Errorf("values-small.yaml asks for cpu %s, memory %s", cpu.String(), mem.String())
	}
}
