// Package serviceaccounts tests what every logical cluster gets from the
// core's service account machinery (the default ServiceAccount, the
// kube-root-ca.crt ConfigMap, TokenRequest, legacy token Secrets, the
// service-account token authenticator) and ClusterRole aggregation, with
// the real kubectl against one shared server.
package serviceaccounts

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

func TestMain(m *testing.M) {
	os.Exit(framework.RunMain(m))
}

func server(t *testing.T) *framework.Server {
	t.Helper()
	return framework.SharedServer(t)
}

// tokenKubectl is a kubectl that authenticates with token (and nothing
// else) against a workspace path or logical cluster.
func tokenKubectl(t *testing.T, s *framework.Server, cluster, token string) *framework.Kubectl {
	t.Helper()
	raw := s.KubeconfigData(t)
	ci := raw.Clusters[raw.Contexts["shard-base"].Cluster]
	out := clientcmdapi.NewConfig()
	out.Clusters["meshplane"] = &clientcmdapi.Cluster{Server: s.ClusterURL(cluster), CertificateAuthority: ci.CertificateAuthority,
		CertificateAuthorityData: ci.CertificateAuthorityData, InsecureSkipTLSVerify: ci.InsecureSkipTLSVerify, TLSServerName: ci.TLSServerName}
	out.AuthInfos["sa"] = &clientcmdapi.AuthInfo{Token: token}
	out.Contexts["sa"] = &clientcmdapi.Context{Cluster: "meshplane", AuthInfo: "sa"}
	out.CurrentContext = "sa"
	path := filepath.Join(t.TempDir(), "sa.kubeconfig")
	if err := clientcmd.WriteToFile(*out, path); err != nil {
		t.Fatalf("writing kubeconfig: %v", err)
	}
	return &framework.Kubectl{Kubeconfig: path, CacheDir: t.TempDir()}
}

// serverCA is the CA the admin kubeconfig trusts: the core's CA.
func serverCA(t *testing.T, s *framework.Server) string {
	t.Helper()
	raw := s.KubeconfigData(t)
	ci := raw.Clusters[raw.Contexts["shard-base"].Cluster]
	if len(ci.CertificateAuthorityData) > 0 {
		return string(ci.CertificateAuthorityData)
	}
	data, err := os.ReadFile(ci.CertificateAuthority)
	if err != nil {
		t.Fatalf("reading the CA of the admin kubeconfig: %v", err)
	}
	return string(data)
}

// unauthorized reports whether kubectl's stderr tells of a 401 (kubectl
// words it "Unauthorized" or "provide credentials" depending on the
// command).
func unauthorized(stderr string) bool {
	return strings.Contains(stderr, "Unauthorized") || strings.Contains(stderr, "provide credentials")
}

// requireUnauthorized checks that kubectl was refused with a 401.
func requireUnauthorized(t *testing.T, k *framework.Kubectl, what string, args ...string) {
	t.Helper()
	out, stderr, err := k.RunErr(t, args...)
	if err == nil || !unauthorized(stderr) {
		t.Fatalf("%s: want a 401 (Unauthorized), got err=%v\nstdout: %s\nstderr: %s", what, err, out, stderr)
	}
}

// eventuallyUnauthorized waits until kubectl is refused with a 401.
func eventuallyUnauthorized(t *testing.T, k *framework.Kubectl, what string, args ...string) {
	t.Helper()
	framework.Eventually(t, 30*time.Second, 250*time.Millisecond, what, func() (bool, string) {
		out, stderr, err := k.RunErr(t, args...)
		return err != nil && unauthorized(stderr), out + stderr
	})
}

func decode(t *testing.T, b64 string) string {
	t.Helper()
	out, err := base64.StdEncoding.DecodeString(strings.TrimSpace(b64))
	if err != nil {
		t.Fatalf("decoding %q: %v", b64, err)
	}
	return string(out)
}
