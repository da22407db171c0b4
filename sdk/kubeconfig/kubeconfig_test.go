package kubeconfig

import (
	"path/filepath"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

func TestWithContextAndRehosted(t *testing.T) {
	dir := t.TempDir()
	from := filepath.Join(dir, "admin.kubeconfig")
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["base"] = &clientcmdapi.Cluster{Server: "https://127.0.0.1:6443", CertificateAuthority: "/old/ca.crt"}
	cfg.Clusters["root"] = &clientcmdapi.Cluster{Server: "https://127.0.0.1:6443/clusters/root"}
	cfg.AuthInfos["admin"] = &clientcmdapi.AuthInfo{Token: "t"}
	cfg.Contexts["base"] = &clientcmdapi.Context{Cluster: "base", AuthInfo: "admin"}
	cfg.Contexts["root"] = &clientcmdapi.Context{Cluster: "root", AuthInfo: "admin"}
	cfg.CurrentContext = "root"
	if err := clientcmd.WriteToFile(*cfg, from); err != nil {
		t.Fatal(err)
	}

	to := filepath.Join(dir, "base.kubeconfig")
	if err := WithContext(from, "base", to); err != nil {
		t.Fatal(err)
	}
	if got, _ := clientcmd.LoadFromFile(to); got.CurrentContext != "base" || got.AuthInfos["admin"].Token != "t" {
		t.Errorf("WithContext wrote current context %q, admin %+v", got.CurrentContext, got.AuthInfos["admin"])
	}
	if err := WithContext(from, "nope", to); err == nil {
		t.Error("a missing context must be refused")
	}

	proxied := filepath.Join(dir, "proxy.kubeconfig")
	if err := Rehosted(from, "https://127.0.0.1:7443", []byte("PEM"), proxied); err != nil {
		t.Fatal(err)
	}
	got, err := clientcmd.LoadFromFile(proxied)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"base": "https://127.0.0.1:7443", "root": "https://127.0.0.1:7443/clusters/root"} {
		c := got.Clusters[name]
		if c.Server != want || string(c.CertificateAuthorityData) != "PEM" || c.CertificateAuthority != "" {
			t.Errorf("cluster %s: server %q, ca file %q, ca data %q; want %q on the proxy's CA", name, c.Server, c.CertificateAuthority, c.CertificateAuthorityData, want)
		}
	}
}
