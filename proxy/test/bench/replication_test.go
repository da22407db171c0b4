package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/meshplane/meshplane/sdk/kubeconfig"
	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestReplicationBench measures what replicating the other shards costs
// each shard, with the replicas of each shard (--replica-source=shards)
// and with the root shard's cache server (cache), at 2, 4 and 8 shards
// holding the same workspaces (PROXY_BENCH_REPLICATION_WORKSPACES, spread
// over the shards): the watches a shard keeps for its replicas, the
// objects they hold, and the shard's Go heap in use, from each shard's
// /metrics once every shard sees every other's workspaces.
//
//	PROXY_BENCH_RUN=1 go test -run TestReplicationBench -v ./proxy/test/bench/
//
// (PROXY_BENCH_REPLICATION_SHARDS lists the sizes, default 2,4,8;
// PROXY_BENCH_REPLICATION_OUT names a file for the Markdown table).
func TestReplicationBench(t *testing.T) {
	if os.Getenv("PROXY_BENCH_RUN") == "" {
		t.Skip("set PROXY_BENCH_RUN=1 (make bench does)")
	}
	sizes := []int{2, 4, 8}
	if v := os.Getenv("PROXY_BENCH_REPLICATION_SHARDS"); v != "" {
		sizes = nil
		for _, s := range strings.Split(v, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(s))
			if err != nil || n < 2 {
				t.Fatalf("PROXY_BENCH_REPLICATION_SHARDS: %q is not a shard count of 2 or more", s)
			}
			sizes = append(sizes, n)
		}
	}
	workspaces := envInt("PROXY_BENCH_REPLICATION_WORKSPACES", 32)
	var b strings.Builder
	fmt.Fprintf(&b, "Replication cost per shard (%d workspaces spread over the shards; mean over the shards, max in brackets):\n\n", workspaces)
	b.WriteString("| source | shards | watches per shard | replicated objects per shard | goroutines per shard | Go heap in use per shard (MiB) | replica watches in the install |\n")
	b.WriteString("| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, source := range []string{"shards", "cache"} {
		for _, n := range sizes {
			t.Run(fmt.Sprintf("%s-%d", source, n), func(t *testing.T) {
				costs := replicationCost(t, source, n, workspaces)
				var w, o, g, h, wMax, oMax, gMax, hMax float64
				for _, c := range costs {
					w, o, g, h = w+c.watches, o+c.objects, g+c.goroutines, h+c.heap
					wMax, oMax, gMax, hMax = max(wMax, c.watches), max(oMax, c.objects), max(gMax, c.goroutines), max(hMax, c.heap)
				}
				k := float64(len(costs))
				fmt.Fprintf(&b, "| %s | %d | %.0f (%.0f) | %.0f (%.0f) | %.0f (%.0f) | %.1f (%.1f) | %.0f |\n", source, n, w/k, wMax, o/k, oMax, g/k, gMax,
					h/k/(1<<20), hMax/(1<<20), w)
			})
		}
	}
	b.WriteString("\nWith the cache server, the root shard also serves one watch per kind and shard on it (14 x shards).\n")
	t.Log("\n" + b.String())
	if out := os.Getenv("PROXY_BENCH_REPLICATION_OUT"); out != "" {
		if err := os.WriteFile(out, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// shardCost is one shard's replication figures.
type shardCost struct{ watches, objects, goroutines, heap float64 }

var (
	watchesMetric = regexp.MustCompile(`(?m)^meshplane_shard_replica_watches (\S+)$`)
	objectsMetric = regexp.MustCompile(`(?m)^meshplane_shard_replica_objects\{resource="([^"]+)"\} (\S+)$`)
	heapMetric    = regexp.MustCompile(`(?m)^go_memstats_heap_inuse_bytes (\S+)$`)
	goroutines    = regexp.MustCompile(`(?m)^go_goroutines (\S+)$`)
)

// replicationCost starts n shards reading each other from source, spreads
// the workspaces over them and reads each shard's figures once its
// replica holds the other shards' workspaces.
func replicationCost(t *testing.T, source string, n, workspaces int) []shardCost {
	root := framework.StartServer(t, framework.WithExtraArgs("--replica-source="+source))
	rootKubeconfig := filepath.Join(t.TempDir(), "root-shard.kubeconfig")
	if err := kubeconfig.WithContext(root.Kubeconfig, "shard-base", rootKubeconfig); err != nil {
		t.Fatal(err)
	}
	shards := []*framework.Server{root}
	names := []string{"root"}
	for i := 1; i < n; i++ {
		name := fmt.Sprintf("s%d", i)
		shards = append(shards, framework.StartServer(t, framework.WithCredentialsOf(root),
			framework.WithExtraArgs("--shard-name", name, "--root-shard-kubeconfig", rootKubeconfig, "--replica-source="+source)))
		names = append(names, name)
	}
	inRoot := root.KubectlFor("root")
	framework.Eventually(t, 2*time.Minute, 250*time.Millisecond, "every shard to register in root", func() (bool, string) {
		out, errOut, err := inRoot.RunErr(t, "get", "shards", "-o", "name")
		return err == nil && strings.Count(out, "shard.core.kcp.io/") == n, out + errOut
	})
	held := make([]int, n)
	for i := range workspaces {
		on := i % n
		name := fmt.Sprintf("ws-%d", i)
		inRoot.RunStdin(t, fmt.Sprintf("apiVersion: tenancy.kcp.io/v1alpha1\nkind: Workspace\nmetadata: {name: %s}\n"+
			"spec: {location: {selector: {matchLabels: {name: %s}}}}\n", name, names[on]), "apply", "-f", "-")
		held[on]++
	}
	for i := range workspaces {
		framework.WaitWorkspaceReady(t, inRoot, fmt.Sprintf("ws-%d", i))
	}
	costs := make([]shardCost, n)
	for i, s := range shards {
		// Every workspace of the other shards is in this shard's replica.
		want := workspaces - held[i]
		framework.Eventually(t, 2*time.Minute, 500*time.Millisecond, "shard "+names[i]+" to replicate the others' workspaces", func() (bool, string) {
			r := s.RequestURL(t, s.AdminToken(t), "GET", s.BaseURL+"/metrics", "", nil)
			body := string(r.Body)
			c := shardCost{}
			if m := watchesMetric.FindStringSubmatch(body); m != nil {
				c.watches, _ = strconv.ParseFloat(m[1], 64)
			}
			lcs := 0.0
			for _, m := range objectsMetric.FindAllStringSubmatch(body, -1) {
				v, _ := strconv.ParseFloat(m[2], 64)
				c.objects += v
				if m[1] == "logicalclusters" {
					lcs = v
				}
			}
			if m := heapMetric.FindStringSubmatch(body); m != nil {
				c.heap, _ = strconv.ParseFloat(m[1], 64)
			}
			if m := goroutines.FindStringSubmatch(body); m != nil {
				c.goroutines, _ = strconv.ParseFloat(m[1], 64)
			}
			costs[i] = c
			return r.Code == 200 && lcs >= float64(want), fmt.Sprintf("%d: %.0f replicated logical clusters, want at least %d", r.Code, lcs, want)
		})
	}
	return costs
}
