// Package bench measures the GraphQL gateway against a core started by the
// test kit, with the gateway in-process (so its memory can be read):
//
//   - BenchmarkList100: a list of 100 configmaps through GraphQL and over
//     REST, one at a time and in parallel (and the REST list as protobuf,
//     which the gateway reads, against JSON);
//   - TestSchemaBuild50APIs: schema generation time and memory for a
//     workspace with 50 bound APIs;
//   - TestWorkspacesShareSchema: memory with many workspaces (1,000 by
//     default, GW_BENCH_WORKSPACES) that share one API set.
//
// Run with `make bench` or
// GW_BENCH_RUN=1 go test -run 'Test' -bench . -benchtime 200x ./gateway/test/bench/ -v
package bench

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/meshplane/meshplane/gateway/internal/kube"
	"github.com/meshplane/meshplane/gateway/internal/schema"
	"github.com/meshplane/meshplane/gateway/internal/server"
	"github.com/meshplane/meshplane/sdk/testing/framework"
)

func TestMain(m *testing.M) { os.Exit(framework.RunMain(m)) }

type env struct {
	s     *framework.Server
	kube  *kube.Client
	gw    *server.Server
	url   string
	token string
}

var (
	once   sync.Once
	shared *env
)

func setup(t testing.TB) *env {
	t.Helper()
	if _, isTest := t.(*testing.T); isTest && os.Getenv("GW_BENCH_RUN") == "" {
		t.Skip("a benchmark: run by `make bench` (set GW_BENCH_RUN=1 to run it with go test)")
	}
	s := framework.SharedServer(t)
	once.Do(func() {
		kc, err := kube.New(s.RESTConfig(t, ""))
		if err != nil {
			t.Fatal(err)
		}
		gw := server.New(server.Config{Kube: kc, Limits: server.DefaultLimits, Refresh: 2 * time.Second, Idle: time.Hour})
		hs := httptest.NewServer(gw)
		shared = &env{s: s, kube: kc, gw: gw, url: hs.URL, token: s.AdminToken(t)}
	})
	if shared == nil {
		t.Fatal("set-up failed in an earlier test")
	}
	return shared
}

var httpClient = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64, TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}

func (e *env) graphql(t testing.TB, ws, query string) []byte {
	body, _ := json.Marshal(map[string]any{"query": query})
	req, _ := http.NewRequest("POST", e.url+"/api/clusters/"+ws+"/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+e.token)
	resp, err := httpClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || bytes.Contains(b, []byte(`"errors"`)) {
		t.Fatalf("GraphQL %d: %s", resp.StatusCode, b)
	}
	return b
}

func (e *env) rest(t testing.TB, path string) []byte { return e.restAs(t, path, "application/json") }

func (e *env) restAs(t testing.TB, path, accept string) []byte {
	req, _ := http.NewRequest("GET", e.s.BaseURL+path, nil)
	req.Header.Set("Authorization", "Bearer "+e.token)
	req.Header.Set("Accept", accept)
	resp, err := httpClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("REST %d: %s", resp.StatusCode, b)
	}
	return b
}

// Both sides select the 100 by label: every namespace also holds the
// kube-root-ca.crt configmap.
const listQuery = `{ v1 { ConfigMaps(namespace: "default", labelselector: "app=bench") { items { metadata { name namespace uid resourceVersion labels creationTimestamp } data } } } }`

// BenchmarkList100 lists 100 configmaps (each with a label and 3 data
// keys) through the gateway and straight from the core.
func BenchmarkList100(b *testing.B) {
	e := setup(b)
	ws := e.s.CreateOrg(b, "gqlbench").Path
	k := e.s.KubectlFor(ws)
	var manifest strings.Builder
	for i := 0; i < 100; i++ {
		fmt.Fprintf(&manifest, "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm-%03d, namespace: default, labels: {app: bench}}\ndata: {a: \"1\", b: \"two\", c: \"three\"}\n", i)
	}
	k.RunStdin(b, manifest.String(), "apply", "-f", "-")
	if n := strings.Count(string(e.graphql(b, ws, listQuery)), `"uid"`); n != 100 {
		b.Fatalf("GraphQL listed %d configmaps, want 100", n)
	}
	restPath := "/clusters/" + ws + "/api/v1/namespaces/default/configmaps?labelSelector=app%3Dbench"
	b.Run("graphql", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			e.graphql(b, ws, listQuery)
		}
	})
	b.Run("rest", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			e.rest(b, restPath)
		}
	})
	// Paired: every iteration makes one GraphQL and one REST request back
	// to back (which goes first alternates), so both see the same load on
	// a shared machine; the ratio is the median of the pairs' ratios.
	for _, workers := range []int{1, 4} {
		b.Run(fmt.Sprintf("paired-%d", workers), func(b *testing.B) {
			var mu sync.Mutex
			var gq, rs, ratios []float64
			var wg sync.WaitGroup
			next := make(chan int)
			for w := 0; w < workers; w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range next {
						var g, r time.Duration
						for k := 0; k < 2; k++ {
							start := time.Now()
							if (i+k)%2 == 0 {
								e.graphql(b, ws, listQuery)
								g = time.Since(start)
							} else {
								e.rest(b, restPath)
								r = time.Since(start)
							}
						}
						mu.Lock()
						gq, rs, ratios = append(gq, ms(g)), append(rs, ms(r)), append(ratios, float64(g)/float64(r))
						mu.Unlock()
					}
				}()
			}
			for i := 0; i < b.N; i++ {
				next <- i
			}
			close(next)
			wg.Wait()
			b.ReportMetric(median(gq), "graphql-p50-ms")
			b.ReportMetric(median(rs), "rest-p50-ms")
			b.ReportMetric(median(ratios), "ratio-p50")
		})
	}
	// The core's own cost of JSON: the same REST list as protobuf (what
	// the gateway asks for), paired with JSON the same way.
	b.Run("paired-rest-protobuf", func(b *testing.B) {
		var js, pb, ratios []float64
		for i := 0; i < b.N; i++ {
			var j, p time.Duration
			for k := 0; k < 2; k++ {
				start := time.Now()
				if (i+k)%2 == 0 {
					e.rest(b, restPath)
					j = time.Since(start)
				} else {
					e.restAs(b, restPath, "application/vnd.kubernetes.protobuf")
					p = time.Since(start)
				}
			}
			js, pb, ratios = append(js, ms(j)), append(pb, ms(p)), append(ratios, float64(p)/float64(j))
		}
		b.ReportMetric(median(js), "json-p50-ms")
		b.ReportMetric(median(pb), "protobuf-p50-ms")
		b.ReportMetric(median(ratios), "ratio-p50")
	})
	b.Run("graphql-parallel", func(b *testing.B) {
		b.SetParallelism(4)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				e.graphql(b, ws, listQuery)
			}
		})
	})
	b.Run("rest-parallel", func(b *testing.B) {
		b.SetParallelism(4)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				e.rest(b, restPath)
			}
		})
	})
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return s[len(s)/2]
}

func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// fiftyCRDs is one API group with 50 kinds, each with a spec of nested
// objects, an enum, a map, an int-or-string and a list.
func fiftyCRDs() string {
	var b strings.Builder
	for i := 0; i < 50; i++ {
		fmt.Fprintf(&b, `---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: kind%02ds.fifty.bench.dev}
spec:
  group: fifty.bench.dev
  scope: Namespaced
  names: {plural: kind%02ds, singular: kind%02d, kind: Kind%02d, listKind: Kind%02dList}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              mode: {type: string, enum: [Fast, Safe]}
              replicas: {type: integer}
              port: {x-kubernetes-int-or-string: true}
              labels: {type: object, additionalProperties: {type: string}}
              secretRef: {type: object, properties: {name: {type: string}}}
              rules:
                type: array
                items:
                  type: object
                  properties:
                    host: {type: string}
                    paths: {type: array, items: {type: string}}
          status:
            type: object
            properties:
              phase: {type: string}
              conditions: {type: array, items: {type: object, properties: {type: {type: string}, status: {type: string}, message: {type: string}}}}
`, i, i, i, i, i)
	}
	return b.String()
}

// TestSchemaBuild50APIs binds 50 APIs into a workspace and measures how
// long generating its schema takes (discovery and OpenAPI reads included)
// and how much memory the schema holds.
func TestSchemaBuild50APIs(t *testing.T) {
	e := setup(t)
	provider := e.s.CreateOrg(t, "fifty-provider")
	e.s.ExportCRD(t, provider, fiftyCRDs(), "fifty.bench.dev")
	consumer := e.s.CreateOrg(t, "fifty-consumer")
	e.s.Bind(t, consumer, "fifty", provider, "fifty.bench.dev", nil)
	ctx := context.Background()
	framework.Eventually(t, 30*time.Second, 250*time.Millisecond, "50 bound APIs in discovery", func() (bool, string) {
		b, err := e.kube.Do(ctx, "", kube.Request{Method: "GET", Path: "/clusters/" + consumer.Path + "/apis/fifty.bench.dev/v1"})
		return err == nil && strings.Count(string(b), `"kind":"Kind`) >= 50, string(b)
	})

	const rounds = 5
	var fetch, build time.Duration
	var m *schema.Model
	var before, after uint64
	for i := 0; i < rounds; i++ {
		start := time.Now()
		set, err := e.kube.FetchAPISet(ctx, consumer.Path)
		if err != nil {
			t.Fatal(err)
		}
		in, err := e.kube.FetchInput(ctx, consumer.Path, set)
		if err != nil {
			t.Fatal(err)
		}
		fetch += time.Since(start)
		m = nil
		before = heapInUse()
		start = time.Now()
		m, err = schema.Build(in)
		if err != nil {
			t.Fatal(err)
		}
		build += time.Since(start)
		in = nil
		after = heapInUse()
	}
	runtime.KeepAlive(m)
	fields := 0
	for _, d := range m.Schema.Types {
		fields += len(d.Fields)
	}
	report(t, "Schema of a workspace with 50 bound APIs (plus the built-in ones)", [][2]string{
		{"resources in the schema", strconv.Itoa(len(m.Resources))},
		{"GraphQL types / fields", fmt.Sprintf("%d / %d", len(m.Schema.Types), fields)},
		{"discovery + OpenAPI reads (mean of 5)", (fetch / rounds).Round(time.Millisecond).String()},
		{"schema generation (mean of 5)", (build / rounds).Round(time.Millisecond).String()},
		{"heap held by the schema", mib(after - before)},
	})

	// Through the gateway: the first request generates, later ones reuse.
	start := time.Now()
	e.graphql(t, consumer.Path, `{ fifty_bench_dev { v1 { Kind07s { items { metadata { name } } } } } }`)
	first := time.Since(start)
	start = time.Now()
	e.graphql(t, consumer.Path, `{ fifty_bench_dev { v1 { Kind07s { items { metadata { name } } } } } }`)
	report(t, "Gateway, same workspace", [][2]string{{"first request (generates the schema)", first.Round(time.Millisecond).String()}, {"second request", time.Since(start).Round(time.Microsecond).String()}})
}

// TestWorkspacesShareSchema serves many workspaces with one API set and
// checks that they hold one schema.
func TestWorkspacesShareSchema(t *testing.T) {
	e := setup(t)
	n := 1000
	if v := os.Getenv("GW_BENCH_WORKSPACES"); v != "" {
		n, _ = strconv.Atoi(v)
	}
	parent := e.s.CreateOrg(t, "many")
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("w%04d", i)
	}
	start := time.Now()
	var wss []framework.Workspace
	for i := 0; i < n; i += 100 {
		wss = append(wss, e.s.CreateWorkspaces(t, parent.Path, names[i:min(i+100, n)]...)...)
	}
	t.Logf("created %d workspaces in %v", n, time.Since(start).Round(time.Second))
	wsBefore, schemasBefore := e.gw.Registry.Stats()
	before := heapInUse()
	// The first tenth pays the fixed costs (the schema, connections to
	// the core, caches); the rest shows what one more workspace costs.
	tenth := max(n/10, 1)
	var atTenth uint64
	var elapsed time.Duration
	for i, w := range wss {
		if i == tenth {
			atTenth = heapInUse()
		}
		start := time.Now()
		e.graphql(t, w.Path, `{ v1 { ConfigMaps(limit: 1) { items { metadata { name } } } } }`)
		elapsed += time.Since(start)
	}
	after := heapInUse()
	wsAfter, schemasAfter := e.gw.Registry.Stats()
	report(t, fmt.Sprintf("%d workspaces with one API set", n), [][2]string{
		{"workspaces known to the gateway (before, after)", fmt.Sprintf("%d, %d", wsBefore, wsAfter)},
		{"schemas held (before, after)", fmt.Sprintf("%d, %d", schemasBefore, schemasAfter)},
		{"first request to each workspace (total, mean)", fmt.Sprintf("%v, %v", elapsed.Round(time.Millisecond), (elapsed / time.Duration(n)).Round(time.Microsecond))},
		{"gateway heap growth for all of them", mib(after - before)},
		{fmt.Sprintf("of which for the last %d (per workspace)", n-tenth), perWorkspace(after, atTenth, n-tenth)},
	})
	if schemasAfter-schemasBefore > 1 {
		t.Errorf("%d workspaces with one API set hold %d new schemas, want at most 1", n, schemasAfter-schemasBefore)
	}
}

// perWorkspace is the heap growth from before to after over n workspaces.
func perWorkspace(after, before uint64, n int) string {
	if after < before || n <= 0 {
		return "0 (the heap shrank)"
	}
	return fmt.Sprintf("%s (%.2f KiB)", mib(after-before), float64(after-before)/1024/float64(n))
}

func mib(b uint64) string {
	if int64(b) < 0 {
		return "0 MiB (the heap shrank)"
	}
	return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
}

// report logs a Markdown table and appends it to $GW_BENCH_OUT if set.
func report(t *testing.T, title string, rows [][2]string) {
	var b strings.Builder
	fmt.Fprintf(&b, "\n### %s\n\n| measure | value |\n| --- | --- |\n", title)
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s |\n", r[0], r[1])
	}
	t.Log(b.String())
	if p := os.Getenv("GW_BENCH_OUT"); p != "" {
		if f, err := os.OpenFile(p, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
			f.WriteString(b.String())
			f.Close()
		}
	}
}
