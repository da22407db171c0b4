package cluster

import (
	"context"
	"crypto/rand"
	"encoding/csv"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/meshplane/meshplane/sdk/platformenv"
	"github.com/meshplane/meshplane/sdk/testing/framework"
	"github.com/meshplane/meshplane/sdk/testing/kubecluster"
)

// tokenUsers writes the demo users' static tokens: the Secret the core
// reads (core.staticTokensSecret) and a local copy for the framework
// (MESHPLANE_EXTERNAL_TOKEN_USERS). It returns the local file.
func tokenUsers(t *testing.T, cs kubernetes.Interface, ns, secret string) string {
	t.Helper()
	var b strings.Builder
	w := csv.NewWriter(&b)
	for _, u := range framework.DefaultTokenUsers {
		tok := make([]byte, 24)
		if _, err := rand.Read(tok); err != nil {
			t.Fatal(err)
		}
		rec := []string{hex.EncodeToString(tok), u.Name, u.UID}
		if len(u.Groups) > 0 {
			rec = append(rec, strings.Join(u.Groups, ","))
		}
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
	}
	w.Flush()
	ctx := context.Background()
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: secret},
		StringData: map[string]string{"tokens.csv": b.String()}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "tokens.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// nodePortURL is scheme://<node>:<NodePort of svc's first port>: the
// Service through kube-proxy, from this machine.
func nodePortURL(t *testing.T, cs kubernetes.Interface, ns, svc, scheme string) string {
	t.Helper()
	s, err := cs.CoreV1().Services(ns).Get(context.Background(), svc, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Spec.Ports) == 0 || s.Spec.Ports[0].NodePort == 0 {
		t.Fatalf("Service %s/%s has no NodePort (type %s)", ns, svc, s.Spec.Type)
	}
	return fmt.Sprintf("%s://%s:%d", scheme, kubecluster.NodeIP, s.Spec.Ports[0].NodePort)
}

// writePlatformEnv writes what the framework's external mode reads for the
// release: an admin kubeconfig with the contexts root and base (kcp-admin,
// from <release>-admin-kubeconfig) and shard-base (the shard admin, from
// <release>-shard-admin-kubeconfig), every server at the core's NodePort,
// and a platform.env naming it, CORE_URL and GRAPHQL_URL.
func writePlatformEnv(t *testing.T, cs kubernetes.Interface, ns, rel string) string {
	t.Helper()
	load := func(secret string) *clientcmdapi.Config {
		s, err := cs.CoreV1().Secrets(ns).Get(context.Background(), secret, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := clientcmd.Load(s.Data["kubeconfig"])
		if err != nil {
			t.Fatalf("Secret %s: %v", secret, err)
		}
		return cfg
	}
	core := nodePortURL(t, cs, ns, rel+"-core", "https")
	admin, shard := load(rel+"-admin-kubeconfig"), load(rel+"-shard-admin-kubeconfig")
	rehost := func(c *clientcmdapi.Cluster) {
		u, err := url.Parse(c.Server)
		if err != nil {
			t.Fatal(err)
		}
		c.Server = core + u.Path
	}
	for _, c := range admin.Clusters {
		rehost(c)
	}
	for name, c := range shard.Clusters {
		rehost(c)
		admin.Clusters["shard-"+name] = c
	}
	for name, a := range shard.AuthInfos {
		admin.AuthInfos[name] = a
	}
	for _, ctx := range shard.Contexts {
		admin.Contexts["shard-base"] = &clientcmdapi.Context{Cluster: "shard-" + ctx.Cluster, AuthInfo: ctx.AuthInfo}
		break
	}
	dir := t.TempDir()
	kc := filepath.Join(dir, "admin.kubeconfig")
	if err := clientcmd.WriteToFile(*admin, kc); err != nil {
		t.Fatal(err)
	}
	env := []platformenv.Entry{{Key: "KUBECONFIG", Value: kc}, {Key: "CORE_URL", Value: core},
		{Key: "GRAPHQL_URL", Value: nodePortURL(t, cs, ns, rel+"-graphql-gateway", "http")}}
	path := filepath.Join(dir, platformenv.FileName)
	if err := platformenv.Write(path, env); err != nil {
		t.Fatal(err)
	}
	return path
}
