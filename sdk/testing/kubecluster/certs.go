package kubecluster

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"strconv"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/meshplane/meshplane/sdk/testing/pki"
)

// certs are the cluster's PKI: one CA signs every serving and client
// certificate; each component has its own identity.
type certs struct {
	ca                       *pki.CA
	apiserver, kubeletServer pki.Pair
	kubeletClient            pki.Pair // the API server's client certificate to kubelets
	saKey, saPub             string
	apiserverPort            int
	// kubeconfigs by component
	admin, controllerManager, scheduler, kubelet, kubeProxy, coredns string
}

// writeCerts writes the CA, the certificates, the service-account key and a
// kubeconfig per component under Dir/pki.
func (c *Cluster) writeCerts(context.Context) error {
	dir := c.path("pki")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	port, err := freePort()
	if err != nil {
		return err
	}
	ca, err := pki.NewCA(dir, "ca")
	if err != nil {
		return err
	}
	k := &certs{ca: ca, apiserverPort: port}
	svc := "kubernetes.default.svc"
	if k.apiserver, err = ca.Server("apiserver", NodeIP, "127.0.0.1", "10.96.0.1", "localhost",
		"kubernetes", "kubernetes.default", svc, svc+"."+ClusterDomain); err != nil {
		return err
	}
	if k.kubeletServer, err = ca.Server("kubelet-server", NodeIP, c.NodeName); err != nil {
		return err
	}
	if k.kubeletClient, err = ca.Client("apiserver-kubelet-client", "kube-apiserver-kubelet-client", "system:masters"); err != nil {
		return err
	}
	if k.saKey, k.saPub, err = writeServiceAccountKey(dir); err != nil {
		return err
	}
	server := "https://" + net.JoinHostPort(NodeIP, strconv.Itoa(port))
	identities := []struct {
		name, user string
		groups     []string
		dst        *string
	}{
		{"admin", "kubecluster-admin", []string{"system:masters"}, &k.admin},
		{"controller-manager", "system:kube-controller-manager", nil, &k.controllerManager},
		{"scheduler", "system:kube-scheduler", nil, &k.scheduler},
		{"kubelet", "system:node:" + c.NodeName, []string{"system:nodes"}, &k.kubelet},
		{"kube-proxy", "system:kube-proxy", nil, &k.kubeProxy},
		{"coredns", "kubecluster:coredns", nil, &k.coredns},
	}
	for _, id := range identities {
		pair, err := ca.Client(id.name, id.user, id.groups...)
		if err != nil {
			return err
		}
		*id.dst = c.path("pki", id.name+".kubeconfig")
		if err := writeKubeconfig(*id.dst, server, ca.CertFile, pair); err != nil {
			return err
		}
	}
	c.certs = k
	c.Kubeconfig = k.admin
	return c.loadClient()
}

func writeKubeconfig(path, server, caFile string, pair pki.Pair) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["kubecluster"] = &clientcmdapi.Cluster{Server: server, CertificateAuthority: caFile}
	cfg.AuthInfos["user"] = &clientcmdapi.AuthInfo{ClientCertificate: pair.CertFile, ClientKey: pair.KeyFile}
	cfg.Contexts["kubecluster"] = &clientcmdapi.Context{Cluster: "kubecluster", AuthInfo: "user"}
	cfg.CurrentContext = "kubecluster"
	return clientcmd.WriteToFile(*cfg, path)
}

// writeServiceAccountKey writes the key that signs service-account tokens
// and its public half.
func writeServiceAccountKey(dir string) (keyFile, pubFile string, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", "", err
	}
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return "", "", err
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return "", "", err
	}
	keyFile, pubFile = dir+"/sa.key", dir+"/sa.pub"
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		return "", "", err
	}
	return keyFile, pubFile, os.WriteFile(pubFile, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}), 0o644)
}

// freePort returns a TCP port free on 127.0.0.1 now (the cluster's
// components bind theirs on 127.0.0.1 or NodeIP).
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
