package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/meshplane/meshplane/providers/credentials"
	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestTokenFileRefresh keeps a ServiceAccount's token fresh in a file, as
// the launcher does for the account-operator: the file is replaced by a new
// valid token before the old expires, and a kubeconfig naming it as
// tokenFile authenticates as the ServiceAccount with each.
func TestTokenFileRefresh(t *testing.T) {
	s := platform(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg := s.KCPAdminRESTConfig(t, "root:platform-mesh-system")
	cs := kubernetes.NewForConfigOrDie(cfg)
	name := framework.UniqueName("tokenfile")
	if _, err := cs.CoreV1().ServiceAccounts("default").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}

	dir := t.TempDir()
	tf := &credentials.TokenFile{Config: cfg, Namespace: "default", Name: name, TTL: 10 * time.Minute,
		Path: filepath.Join(dir, "token"), RefreshAfter: 2 * time.Second, Logf: t.Logf}
	if err := tf.Validate(); err != nil {
		t.Fatal(err)
	}
	if bad := (&credentials.TokenFile{TTL: 5 * time.Minute}).Validate(); bad == nil || !strings.Contains(bad.Error(), "10 minutes") {
		t.Errorf("a 5 minute lifetime was accepted: %v", bad)
	}
	if err := tf.Mint(ctx); err != nil {
		t.Fatal(err)
	}
	first, err := os.ReadFile(tf.Path)
	if err != nil {
		t.Fatal(err)
	}
	kc, err := credentials.Kubeconfig(&rest.Config{Host: cfg.Host, TLSClientConfig: cfg.TLSClientConfig, BearerTokenFile: tf.Path}, cfg.Host, "")
	if err != nil {
		t.Fatal(err)
	}
	if kc.AuthInfos["provider"].TokenFile != tf.Path {
		t.Fatalf("kubeconfig user %+v does not name the token file", kc.AuthInfos["provider"])
	}
	kcPath := filepath.Join(dir, "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, kcPath); err != nil {
		t.Fatal(err)
	}
	whoami := func() string {
		t.Helper()
		return strings.TrimSpace((&framework.Kubectl{Kubeconfig: kcPath}).Run(t, "auth", "whoami", "-o", "jsonpath={.status.userInfo.username}"))
	}
	want := "system:serviceaccount:default:" + name
	if got := whoami(); got != want {
		t.Fatalf("whoami with the first token = %q, want %q", got, want)
	}

	go tf.Run(ctx)
	framework.Eventually(t, time.Minute, 500*time.Millisecond, "the token file to hold a new token", func() (bool, string) {
		now, err := os.ReadFile(tf.Path)
		if err != nil {
			return false, err.Error()
		}
		return len(now) > 0 && string(now) != string(first), "still the first token"
	})
	if got := whoami(); got != want {
		t.Fatalf("whoami with the refreshed token = %q, want %q", got, want)
	}
	if fi, err := os.Stat(tf.Path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("token file mode %v (%v), want 0600", fi.Mode(), err)
	}
}
