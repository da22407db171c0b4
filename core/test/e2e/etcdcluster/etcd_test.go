// Package etcdcluster runs the core on an external three-member etcd
// cluster with TLS (etcd's embed package in three processes of the test,
// see member/): it serves through the loss of one member (stopped, or
// SIGKILLed under 8 concurrent writers and restarted), and no acknowledged
// write is lost.
package etcdcluster

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/meshplane/meshplane/sdk/process"
	"github.com/meshplane/meshplane/sdk/testing/framework"
	"github.com/meshplane/meshplane/sdk/testing/pki"
)

func TestMain(m *testing.M) {
	code := m.Run()
	framework.CleanupBinaries()
	os.Exit(code)
}

type member struct {
	name, clientURL string
	proc            *process.Process
	log             string
	// cmd is how the member is started (again, on the same data directory).
	bin  string
	args []string
}

// start runs the member's process, its output appended to its log.
func (m *member) start(t *testing.T) {
	t.Helper()
	lf, err := os.OpenFile(m.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer lf.Close()
	cmd := exec.Command(m.bin, m.args...)
	cmd.Stdout, cmd.Stderr = lf, lf
	if m.proc, err = process.StartProcess(cmd); err != nil {
		t.Fatal(err)
	}
}

// startCluster starts three TLS members on loopback and returns them with
// the CA and the client certificate for the core.
func startCluster(t *testing.T) ([]*member, *pki.CA, pki.Pair) {
	t.Helper()
	bin, err := framework.Binary("etcd-member", "core", "./test/e2e/etcdcluster/member")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ca, err := pki.NewCA(dir, "etcd-ca")
	if err != nil {
		t.Fatal(err)
	}
	client, err := ca.Client("core-client", "meshplane")
	if err != nil {
		t.Fatal(err)
	}
	ports, err := process.FreePorts(6)
	if err != nil {
		t.Fatal(err)
	}
	var members []*member
	var initial []string
	for i := 0; i < 3; i++ {
		m := &member{name: fmt.Sprintf("m%d", i), clientURL: fmt.Sprintf("https://127.0.0.1:%d", ports[2*i])}
		members = append(members, m)
		initial = append(initial, fmt.Sprintf("%s=https://127.0.0.1:%d", m.name, ports[2*i+1]))
	}
	for i, m := range members {
		cert, err := ca.Server(m.name, "127.0.0.1")
		if err != nil {
			t.Fatal(err)
		}
		m.log = filepath.Join(dir, m.name+".log")
		m.bin = bin
		m.args = []string{"--name", m.name, "--data-dir", filepath.Join(dir, m.name),
			"--client-url", m.clientURL, "--peer-url", fmt.Sprintf("https://127.0.0.1:%d", ports[2*i+1]),
			"--initial-cluster", strings.Join(initial, ","),
			"--cert-file", cert.CertFile, "--key-file", cert.KeyFile, "--trusted-ca-file", ca.CertFile}
		m.start(t)
		t.Cleanup(func() {
			if m.proc.Running() {
				_ = m.proc.Stop(10 * time.Second)
			}
			if t.Failed() {
				b, _ := os.ReadFile(m.log)
				t.Logf("etcd member %s log:\n%s", m.name, b)
			}
		})
	}
	return members, ca, client
}

// startCore starts a core on the cluster's members, with the client
// certificate.
func startCore(t *testing.T, members []*member, ca *pki.CA, client pki.Pair) *framework.Server {
	t.Helper()
	var endpoints []string
	for _, m := range members {
		endpoints = append(endpoints, m.clientURL)
	}
	return framework.StartServer(t, framework.WithExtraArgs("--etcd-servers", strings.Join(endpoints, ","),
		"--etcd-cafile", ca.CertFile, "--etcd-certfile", client.CertFile, "--etcd-keyfile", client.KeyFile))
}

func TestExternalEtcdCluster(t *testing.T) {
	members, ca, client := startCluster(t)
	s := startCore(t, members, ca, client)
	org := s.CreateOrg(t, "etcd")
	cs, err := kubernetes.NewForConfig(s.RESTConfig(t, org.Path))
	if err != nil {
		t.Fatal(err)
	}
	cms := cs.CoreV1().ConfigMaps("default")

	// write creates a configmap, retrying until the server acknowledges it
	// (a write during a leader election may fail, and is then not
	// acknowledged).
	var acknowledged []string
	write := func(name string) {
		t.Helper()
		framework.Eventually(t, 30*time.Second, 100*time.Millisecond, "configmap "+name+" to be written", func() (bool, string) {
			_, err := cms.Create(framework.CallContext(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"n": name}}, metav1.CreateOptions{})
			if err != nil && !strings.Contains(err.Error(), "already exists") {
				return false, err.Error()
			}
			return true, ""
		})
		acknowledged = append(acknowledged, name)
	}
	for i := 0; i < 20; i++ {
		write(fmt.Sprintf("before-%d", i))
	}

	// The leader goes: the other two elect another and keep a quorum.
	down := leader(t, members, ca, client)
	if err := down.proc.Stop(10 * time.Second); err != nil {
		t.Fatalf("stopping etcd member %s: %v", down.name, err)
	}
	t.Logf("etcd leader %s stopped", down.name)
	for i := 0; i < 20; i++ {
		write(fmt.Sprintf("after-%d", i))
	}
	// A new workspace needs writes of several controllers.
	ws := s.CreateWorkspaces(t, org.Path, "after-stop")[0]
	s.KubectlFor(ws.Path).Run(t, "create", "configmap", "in-new-workspace", "-n", "default")

	list, err := cms.List(framework.CallContext(t), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("listing configmaps with one etcd member down: %v", err)
	}
	have := map[string]bool{}
	for _, cm := range list.Items {
		have[cm.Name] = cm.Data["n"] == cm.Name
	}
	var lost []string
	for _, name := range acknowledged {
		if !have[name] {
			lost = append(lost, name)
		}
	}
	if len(lost) > 0 {
		t.Fatalf("%d acknowledged writes are missing: %v", len(lost), lost)
	}
	t.Logf("%d acknowledged writes all read back with member %s down", len(acknowledged), down.name)
}

// leader asks the members which of them leads.
func leader(t *testing.T, members []*member, ca *pki.CA, client pki.Pair) *member {
	t.Helper()
	tlsConfig, err := (transport.TLSInfo{CertFile: client.CertFile, KeyFile: client.KeyFile, TrustedCAFile: ca.CertFile}).ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	var urls []string
	for _, m := range members {
		urls = append(urls, m.clientURL)
	}
	c, err := clientv3.New(clientv3.Config{Endpoints: urls, TLS: tlsConfig, DialTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, m := range members {
		st, err := c.Status(framework.CallContext(t), m.clientURL)
		if err != nil {
			t.Fatalf("status of etcd member %s: %v", m.name, err)
		}
		if st.Leader == st.Header.MemberId {
			return m
		}
	}
	t.Fatal("no etcd member leads")
	return nil
}
