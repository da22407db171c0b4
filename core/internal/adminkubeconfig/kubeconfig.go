// Package adminkubeconfig writes the admin kubeconfig of a server, with
// the contexts and users kcp's admin.kubeconfig has.
package adminkubeconfig

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// FileName is the kubeconfig's name in the root directory.
const FileName = "admin.kubeconfig"

// Tokens are the bearer tokens of the two admin users.
type Tokens struct {
	KCPAdmin, ShardAdmin string
}

// LoadOrCreateTokens reads the admin tokens kept in dir, creating them on
// first start so clients keep working across restarts.
func LoadOrCreateTokens(dir string) (Tokens, error) {
	path := filepath.Join(dir, "admin-tokens")
	if b, err := os.ReadFile(path); err == nil {
		parts := strings.Fields(string(b))
		if len(parts) == 2 {
			return Tokens{KCPAdmin: parts[0], ShardAdmin: parts[1]}, nil
		}
		return Tokens{}, fmt.Errorf("%s is malformed: want two tokens", path)
	}
	t := Tokens{KCPAdmin: randomToken(), ShardAdmin: randomToken()}
	if err := os.WriteFile(path, []byte(t.KCPAdmin+"\n"+t.ShardAdmin+"\n"), 0o600); err != nil {
		return Tokens{}, err
	}
	return t, nil
}

func randomToken() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Write writes the admin kubeconfig to path for a server at baseURL whose
// serving certificate is signed by the CA in caFile (empty: insecure).
func Write(path, baseURL, caFile string, t Tokens) (string, error) {
	var ca []byte
	if caFile != "" {
		b, err := os.ReadFile(caFile)
		if err != nil {
			return "", err
		}
		ca = b
	}
	cluster := func(server string) *clientcmdapi.Cluster {
		return &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: ca, InsecureSkipTLSVerify: len(ca) == 0}
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["root"] = cluster(baseURL + "/clusters/root")
	cfg.Clusters["base"] = cluster(baseURL)
	cfg.Clusters["system:admin"] = cluster(baseURL + "/clusters/system:admin")
	cfg.AuthInfos["kcp-admin"] = &clientcmdapi.AuthInfo{Token: t.KCPAdmin}
	cfg.AuthInfos["shard-admin"] = &clientcmdapi.AuthInfo{Token: t.ShardAdmin}
	cfg.Contexts["root"] = &clientcmdapi.Context{Cluster: "root", AuthInfo: "kcp-admin"}
	cfg.Contexts["base"] = &clientcmdapi.Context{Cluster: "base", AuthInfo: "kcp-admin"}
	cfg.Contexts["system:admin"] = &clientcmdapi.Context{Cluster: "system:admin", AuthInfo: "shard-admin"}
	cfg.Contexts["shard-base"] = &clientcmdapi.Context{Cluster: "base", AuthInfo: "shard-admin"}
	cfg.CurrentContext = "root"
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return "", fmt.Errorf("writing %s: %w", path, err)
	}
	return path, nil
}
