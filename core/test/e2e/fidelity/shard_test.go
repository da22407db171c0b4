package fidelity

import (
	"encoding/json"
	"testing"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestShardIdentity checks what harnesses written for kcp look up first: the
// Shard "root" in root with the server's URLs, and the shard annotations on
// Workspaces and LogicalClusters (core.kcp.io/shard with the shard's name,
// on Workspaces also internal.tenancy.kcp.io/shard with kcp's hash of it).
func TestShardIdentity(t *testing.T) {
	t.Parallel()
	s := server(t)
	k := s.KubectlFor("root")

	var shard struct {
		Spec struct {
			BaseURL             string `json:"baseURL"`
			ExternalURL         string `json:"externalURL"`
			VirtualWorkspaceURL string `json:"virtualWorkspaceURL"`
		} `json:"spec"`
	}
	if err := json.Unmarshal([]byte(k.Run(t, "get", "shards", "root", "-o", "json")), &shard); err != nil {
		t.Fatal(err)
	}
	framework.RequireEqual(t, shard.Spec.BaseURL, s.BaseURL, "spec.baseURL of Shard root")
	framework.RequireEqual(t, shard.Spec.ExternalURL, s.BaseURL, "spec.externalURL of Shard root")
	framework.RequireEqual(t, shard.Spec.VirtualWorkspaceURL, s.BaseURL, "spec.virtualWorkspaceURL of Shard root")
	out := k.Run(t, "get", "shards")
	if rows := framework.Table(out); len(rows) != 2 || len(rows[0]) != 6 || rows[0][2] != "URL" || rows[0][3] != "EXTERNAL" {
		t.Errorf("kubectl get shards: want one shard and kcp's columns NAME REGION URL EXTERNAL URL AGE, got:\n%s", out)
	}
	_, cell := framework.TableRow(t, out, "root")
	framework.RequireEqual(t, cell("URL"), s.BaseURL, "URL column of kubectl get shards")

	org := s.CreateOrg(t, "shard")
	child := s.CreateWorkspaces(t, org.Path, "child")[0]
	for _, ws := range []framework.Workspace{org, child} {
		parent := ws.Path[:len(ws.Path)-len(ws.Name)-1]
		annotations := annotationsOf(t, s.KubectlFor(parent).Run(t, "get", "workspace", ws.Name, "-o", "json"))
		framework.RequireEqual(t, annotations["core.kcp.io/shard"], "root", "annotation core.kcp.io/shard of Workspace "+ws.Path)
		framework.RequireEqual(t, annotations["internal.tenancy.kcp.io/shard"], "1pfxsevk", "annotation internal.tenancy.kcp.io/shard (kcp's hash of \"root\") of Workspace "+ws.Path)
	}
	for _, cluster := range []string{"root", org.Cluster, child.Cluster} {
		annotations := annotationsOf(t, s.KubectlFor(cluster).Run(t, "get", "logicalcluster", "cluster", "-o", "json"))
		framework.RequireEqual(t, annotations["core.kcp.io/shard"], "root", "annotation core.kcp.io/shard of the LogicalCluster of "+cluster)
	}

	// kubectl get workspaces prints the type's name, as kcp does.
	out = s.KubectlFor(org.Path).Run(t, "get", "workspaces")
	_, cell = framework.TableRow(t, out, "child")
	framework.RequireEqual(t, cell("TYPE"), "universal", "TYPE column of kubectl get workspaces")
}

func annotationsOf(t *testing.T, out string) map[string]string {
	t.Helper()
	var obj struct {
		Metadata struct {
			Annotations map[string]string `json:"annotations"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal([]byte(out), &obj); err != nil {
		t.Fatalf("decoding %s: %v", out, err)
	}
	return obj.Metadata.Annotations
}
