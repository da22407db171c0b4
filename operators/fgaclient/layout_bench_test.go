package fgaclient_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	openfgav1 "github.com/openfga/api/proto/openfga/v1"
	"github.com/openfga/openfga/pkg/typesystem"

	"github.com/meshplane/meshplane/apis/core/v1alpha1"
	"github.com/meshplane/meshplane/apis/fga"
	"github.com/meshplane/meshplane/operators/fgaclient"
	"github.com/meshplane/meshplane/sdk/process"
	"github.com/meshplane/meshplane/sdk/testing/openfga"
)

// BenchmarkOrgLayout: what OpenFGA costs per organization, and what a
// member's Check costs, with a store per organization (the platform's
// layout: one type system per store) against one store that holds every
// organization's tuples under one model (ids carry the organization's
// clusters). Each organization: the core model, its org Account owned by
// its founder, one account with an owner and a member, as the
// security-operator writes them. Reported: OpenFGA's RSS and live heap
// (after a forced collection) per organization over the idle server, and
// p50/p99 of the webhook's Check (a member listing configmaps in the
// account's namespace, contextual parent tuple, model id given) over
// random organizations, cached (check-*) and fresh (fresh-*). BENCH_ORGS sets the sizes (default "200,1000"),
// BENCH_LAYOUTS their order (default "stores,shared"). Run with
// -benchtime 1x: every run makes its own server and organizations.
func BenchmarkOrgLayout(b *testing.B) {
	sizes := []int{200, 1000}
	if s := os.Getenv("BENCH_ORGS"); s != "" {
		sizes = nil
		for _, f := range strings.Split(s, ",") {
			n, err := strconv.Atoi(f)
			if err != nil {
				b.Fatal(err)
			}
			sizes = append(sizes, n)
		}
	}
	model, err := fga.Compose([]fga.Module{{Name: fga.CoreModuleName, Contents: fga.CoreModule}})
	if err != nil {
		b.Fatal(err)
	}
	layouts := []string{"stores", "shared"}
	if s := os.Getenv("BENCH_LAYOUTS"); s != "" {
		layouts = strings.Split(s, ",")
	}
	for _, n := range sizes {
		for _, layout := range layouts {
			if layout != "stores" && layout != "shared" {
				b.Fatalf("BENCH_LAYOUTS: unknown layout %q", layout)
			}
			b.Run(fmt.Sprintf("%s/orgs=%d", layout, n), func(b *testing.B) {
				benchLayout(b, model, n, layout == "shared")
			})
		}
	}
}

// layoutOrg is one organization of the benchmark.
type layoutOrg struct {
	store, model string
	check        v1alpha1.Tuple
	contextual   []v1alpha1.Tuple
}

func orgTuples(i int) ([]v1alpha1.Tuple, v1alpha1.Tuple, []v1alpha1.Tuple) {
	org, orgCluster, team := fmt.Sprintf("org%d", i), fmt.Sprintf("org%dws", i), fmt.Sprintf("team%dws", i)
	founder, member := fga.UserID(fmt.Sprintf("alice%d", i)), fga.UserID(fmt.Sprintf("bob%d", i))
	orgObject, teamObject := fga.AccountObject("orgs", org), fga.AccountObject(orgCluster, "team")
	tuples := []v1alpha1.Tuple{
		{Object: fga.OwnerRole("orgs", org), Relation: fga.RelationAssignee, User: founder},
		{Object: orgObject, Relation: fga.RelationOwner, User: fga.OwnerRole("orgs", org) + "#" + fga.RelationAssignee},
		{Object: fga.OwnerRole(orgCluster, "team"), Relation: fga.RelationAssignee, User: founder},
		{Object: teamObject, Relation: fga.RelationOwner, User: fga.OwnerRole(orgCluster, "team") + "#" + fga.RelationAssignee},
		{Object: teamObject, Relation: fga.RelationParent, User: orgObject},
		{Object: teamObject, Relation: fga.RelationMember, User: member},
	}
	ns := fga.NamespaceObject(team, "default")
	return tuples, v1alpha1.Tuple{Object: ns, Relation: "list_core_configmaps", User: member},
		[]v1alpha1.Tuple{{Object: ns, Relation: fga.RelationParent, User: teamObject}}
}

func benchLayout(b *testing.B, model *openfgav1.AuthorizationModel, n int, shared bool) {
	ports, err := process.FreePorts(1)
	if err != nil {
		b.Fatal(err)
	}
	profiler := "127.0.0.1:" + strconv.Itoa(ports[0])
	srv := openfga.Start(b, openfga.Options{Args: []string{"--profiler-enabled", "--profiler-addr", profiler}})
	c, err := fgaclient.New(srv.URL)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	idleRSS, idleHeap := fgaMemory(b, srv.PID(), profiler)

	var sharedStore, sharedModel string
	newStore := func(name string) (string, string) {
		id, err := c.CreateStore(ctx, name)
		if err != nil {
			b.Fatal(err)
		}
		mid, _, err := c.WriteModelIfChanged(ctx, id, "", model)
		if err != nil {
			b.Fatal(err)
		}
		return id, mid
	}
	if shared {
		sharedStore, sharedModel = newStore("orgs")
	}
	orgs := make([]layoutOrg, n)
	for i := range orgs {
		o := &orgs[i]
		if shared {
			o.store, o.model = sharedStore, sharedModel
		} else {
			o.store, o.model = newStore(fmt.Sprintf("org%d", i))
		}
		var tuples []v1alpha1.Tuple
		tuples, o.check, o.contextual = orgTuples(i)
		if err := c.Write(ctx, o.store, tuples, nil); err != nil {
			b.Fatal(err)
		}
	}
	check := func(o layoutOrg, t v1alpha1.Tuple) bool {
		allowed, err := webhookCheck(srv.URL, o, t, false)
		if err != nil {
			b.Fatal(err)
		}
		return allowed
	}
	// Every organization's member once (builds every store's type system),
	// and never another organization's.
	for i, o := range orgs {
		if !check(o, o.check) {
			b.Fatalf("org %d: its member is refused", i)
		}
		other := orgs[(i+1)%n]
		if cross := o.check; check(other, v1alpha1.Tuple{Object: other.check.Object, Relation: cross.Relation, User: cross.User}) {
			b.Fatalf("org %d's member is allowed in org %d", i, (i+1)%n)
		}
	}
	rss, heap := fgaMemory(b, srv.PID(), profiler)

	// The same Checks twice: as the webhook asks them (OpenFGA's Check
	// cache may answer) and fresh (higher consistency: no cache, as every
	// Check after a write to the store).
	const checks = 2000
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ResetTimer()
	for _, fresh := range []bool{false, true} {
		lat := make([]time.Duration, 0, checks)
		for i := 0; i < checks; i++ {
			o := orgs[(i*7919)%n]
			start := time.Now()
			allowed, err := webhookCheck(srv.URL, o, o.check, fresh)
			if err != nil || !allowed {
				b.Fatalf("member refused: %v", err)
			}
			lat = append(lat, time.Since(start))
		}
		slices.Sort(lat)
		prefix := "check"
		if fresh {
			prefix = "fresh"
		}
		b.ReportMetric(ms(lat[len(lat)/2]), prefix+"-p50-ms")
		b.ReportMetric(ms(lat[len(lat)*99/100]), prefix+"-p99-ms")
	}
	b.StopTimer()
	b.ReportMetric(float64(rss-idleRSS)/float64(n)/1024, "rss-KiB/org")
	b.ReportMetric(float64(heap-idleHeap)/float64(n)/1024, "heap-KiB/org")
	b.ReportMetric(0, "ns/op")
}

// webhookCheck asks a Check as the webhook does: the store's model id,
// the contextual parent tuple, default consistency (OpenFGA's Check cache
// may answer) or, fresh, higher consistency (it may not).
func webhookCheck(url string, o layoutOrg, t v1alpha1.Tuple, fresh bool) (bool, error) {
	type key struct {
		Object   string `json:"object"`
		Relation string `json:"relation"`
		User     string `json:"user"`
	}
	req := struct {
		TupleKey             key    `json:"tuple_key"`
		AuthorizationModelID string `json:"authorization_model_id"`
		Consistency          string `json:"consistency,omitempty"`
		ContextualTuples     struct {
			TupleKeys []key `json:"tuple_keys"`
		} `json:"contextual_tuples"`
	}{TupleKey: key{t.Object, t.Relation, t.User}, AuthorizationModelID: o.model}
	if fresh {
		req.Consistency = "HIGHER_CONSISTENCY"
	}
	for _, ct := range o.contextual {
		req.ContextualTuples.TupleKeys = append(req.ContextualTuples.TupleKeys, key{ct.Object, ct.Relation, ct.User})
	}
	body, err := json.Marshal(req)
	if err != nil {
		return false, err
	}
	resp, err := http.Post(url+"/stores/"+o.store+"/check", "application/json", bytes.NewReader(body))
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(resp.Body)
		return false, fmt.Errorf("check: %s: %s", resp.Status, msg)
	}
	var out struct {
		Allowed bool `json:"allowed"`
	}
	return out.Allowed, json.NewDecoder(resp.Body).Decode(&out)
}

// fgaMemory is OpenFGA's resident set (VmRSS) and its live heap after a
// forced collection (HeapAlloc of its pprof heap profile), in bytes.
func fgaMemory(b *testing.B, pid int, profiler string) (rss, heap int64) {
	b.Helper()
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			rss = kb * 1024
		}
	}
	resp, err := http.Get("http://" + profiler + "/debug/pprof/heap?gc=1&debug=1")
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	s := bufio.NewScanner(resp.Body)
	s.Buffer(make([]byte, 1<<20), 1<<20)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), "# HeapAlloc = "); ok {
			heap, _ = strconv.ParseInt(v, 10, 64)
		}
	}
	if rss == 0 || heap == 0 {
		b.Fatalf("no RSS (%d) or heap (%d) of OpenFGA", rss, heap)
	}
	return rss, heap
}

// BenchmarkSharedModelTypeSystem: the one type system of a shared store
// whose model is the core module and the modules of N bound resource
// types (the union over the organizations on it): retained-MB/op as
// BenchmarkCoreModelTypeSystem, retained-KB/type, what each bound type
// adds, and ns/op, what building it costs (at a model change or a cache
// miss).
func BenchmarkSharedModelTypeSystem(b *testing.B) {
	core := fga.Module{Name: fga.CoreModuleName, Contents: fga.CoreModule}
	retained := func(model *openfgav1.AuthorizationModel) float64 {
		const kept = 3
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		systems := make([]*typesystem.TypeSystem, kept)
		for i := range systems {
			var err error
			if systems[i], err = typesystem.NewAndValidate(context.Background(), model); err != nil {
				b.Fatal(err)
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		runtime.KeepAlive(systems)
		return float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / kept
	}
	coreModel, err := fga.Compose([]fga.Module{core})
	if err != nil {
		b.Fatal(err)
	}
	base := retained(coreModel)
	for _, n := range []int{50, 200, 1000} {
		b.Run(fmt.Sprintf("types=%d", n), func(b *testing.B) {
			model, rejected, err := fga.ComposeSkipping(core, modules(n))
			if err != nil || len(rejected) != 0 {
				b.Fatal(err, rejected)
			}
			r := retained(model)
			for b.Loop() {
				if _, err := typesystem.NewAndValidate(context.Background(), model); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(r/1e6, "retained-MB/op")
			b.ReportMetric((r-base)/float64(n)/1e3, "retained-KB/type")
		})
	}
}
