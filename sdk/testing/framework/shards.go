package framework

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/meshplane/meshplane/sdk/kubeconfig"
)

// Shards is a sharded install started by StartShards: a root shard and
// shard b, each with its own embedded etcd and labelled shard=<name>,
// behind one front proxy.
type Shards struct {
	Root, B *Server
	Proxy   *FrontProxy
	// Via is the kit's view through the proxy (the install's admin
	// kubeconfig: every server on the proxy).
	Via *Server
	// RootShardKubeconfig is the shard-base context of root's admin
	// kubeconfig (--root-shard-kubeconfig of other shards).
	RootShardKubeconfig string
}

// StartShards starts root, b and the front proxy; they stop when the test
// ends.
func StartShards(t testing.TB) *Shards {
	t.Helper()
	p := NewProxyPKI(t)
	// The shards read each other from the root shard's cache server, as
	// the launcher and the chart run them (MESHPLANE_E2E_ARGS
	// --replica-source=shards, appended later, tries the replicas of each
	// shard instead).
	root := StartServer(t, WithExtraArgs(append(p.ShardArgs(), "--shard-external-url", p.URL, "--replica-source=cache")...))
	rootKubeconfig := filepath.Join(t.TempDir(), "root-shard.kubeconfig")
	if err := kubeconfig.WithContext(root.Kubeconfig, "shard-base", rootKubeconfig); err != nil {
		t.Fatal(err)
	}
	b := StartServer(t, WithCredentialsOf(root), WithExtraArgs(append(p.ShardArgs(),
		"--shard-name", "b", "--root-shard-kubeconfig", rootKubeconfig, "--shard-external-url", p.URL, "--replica-source=cache")...))
	fp := StartFrontProxy(t, p, root)
	inRoot := root.KubectlFor("root")
	Eventually(t, 30*time.Second, 200*time.Millisecond, "shard b to register in root", func() (bool, string) {
		out, errOut, err := inRoot.RunErr(t, "get", "shards", "-o", "name")
		return err == nil && strings.Contains(out, "shard.core.kcp.io/b"), out + errOut
	})
	inRoot.Run(t, "label", "--overwrite", "shard", "root", "shard=root")
	inRoot.Run(t, "label", "--overwrite", "shard", "b", "shard=b")
	return &Shards{Root: root, B: b, Proxy: fp, Via: fp.Server(t), RootShardKubeconfig: rootKubeconfig}
}

// PinnedWorkspace is a Workspace manifest pinned by spec.location.selector
// to the shards labelled shard=<shard> (StartShards labels them), of type
// typ (path:name, or "" for the default).
func PinnedWorkspace(name, shard, typ string) string {
	out := fmt.Sprintf("apiVersion: tenancy.kcp.io/v1alpha1\nkind: Workspace\nmetadata:\n  name: %s\nspec:\n  location:\n    selector:\n      matchLabels:\n        shard: %s\n", name, shard)
	if typ != "" {
		i := strings.LastIndex(typ, ":")
		out += fmt.Sprintf("  type:\n    name: %s\n    path: %s\n", typ[i+1:], typ[:i])
	}
	return out
}

// WaitWorkspaceReady waits for Workspace name (in k's workspace) to be
// Ready and returns its logical cluster and shard.
func WaitWorkspaceReady(t testing.TB, k *Kubectl, name string) (cluster, shard string) {
	t.Helper()
	Eventually(t, 2*time.Minute, 200*time.Millisecond, "workspace "+name+" to be Ready", func() (bool, string) {
		out, errOut, err := k.RunErr(t, "get", "workspace", name, "-o", `jsonpath={.status.phase}|{.spec.cluster}|{.metadata.annotations.core\.kcp\.io/shard}|{.status.conditions}`)
		if err != nil {
			return false, errOut
		}
		parts := strings.SplitN(out, "|", 4)
		cluster, shard = parts[1], parts[2]
		return parts[0] == "Ready", out
	})
	return cluster, shard
}

// CreatePinnedWorkspace creates a workspace on shard under parent (a
// path) through s and waits until it is Ready.
func CreatePinnedWorkspace(t testing.TB, s *Server, parent, name, shard string) Workspace {
	t.Helper()
	k := s.KubectlFor(parent)
	k.RunStdin(t, PinnedWorkspace(name, shard, ""), "apply", "-f", "-")
	cluster, on := WaitWorkspaceReady(t, k, name)
	if on != shard {
		t.Fatalf("workspace %s:%s landed on shard %q, want %q", parent, name, on, shard)
	}
	return Workspace{Name: name, Path: parent + ":" + name, Cluster: cluster}
}
