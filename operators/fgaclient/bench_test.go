package fgaclient_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	openfgav1 "github.com/openfga/api/proto/openfga/v1"
	"github.com/openfga/openfga/pkg/typesystem"
	"google.golang.org/protobuf/proto"

	"github.com/meshplane/meshplane/apis/core/v1alpha1"
	"github.com/meshplane/meshplane/apis/fga"
	"github.com/meshplane/meshplane/operators/fgaclient"
	"github.com/meshplane/meshplane/sdk/testing/openfga"
)

func modules(n int) []fga.Module {
	var mods []fga.Module
	for i := 0; i < n; i++ {
		r := fga.Resource{Group: fmt.Sprintf("p%03d.example.io", i), Plural: "widgets", Singular: "widget", Namespaced: i%2 == 1}
		mods = append(mods, fga.Module{Name: r.ModuleName(), Contents: fga.ResourceModule(r)})
	}
	return mods
}

// BenchmarkComposeModel200: the security-operator's model composition for
// an organization with 200 bound resource types (parse, conflict checks,
// OpenFGA's module merge), no I/O.
func BenchmarkComposeModel200(b *testing.B) {
	core := fga.Module{Name: fga.CoreModuleName, Contents: fga.CoreModule}
	mods := modules(200)
	b.ReportAllocs()
	for b.Loop() {
		if _, rejected, err := fga.ComposeSkipping(core, mods); err != nil || len(rejected) != 0 {
			b.Fatal(err, rejected)
		}
	}
}

// BenchmarkCoreModelTypeSystem: what OpenFGA keeps in memory, and
// rebuilds on a cache miss, for each organization's store: the type
// system of the platform's model (the core module alone), built as
// OpenFGA's resolver builds it. retained-MB/op is the heap each one holds
// after a collection (OpenFGA's type-system cache keeps one per store
// and model).
func BenchmarkCoreModelTypeSystem(b *testing.B) {
	model, err := fga.Compose([]fga.Module{{Name: fga.CoreModuleName, Contents: fga.CoreModule}})
	if err != nil {
		b.Fatal(err)
	}
	const kept = 20
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	systems := make([]*typesystem.TypeSystem, kept)
	for i := range systems {
		if systems[i], err = typesystem.NewAndValidate(context.Background(), model); err != nil {
			b.Fatal(err)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(systems)
	retained := float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / kept / 1e6
	b.ReportAllocs()
	for b.Loop() {
		if _, err := typesystem.NewAndValidate(context.Background(), model); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(retained, "retained-MB/op")
}

func benchServer(b *testing.B) (*fgaclient.Client, string) {
	b.Helper()
	srv := openfga.Start(b, openfga.Options{})
	c, err := fgaclient.New(srv.URL)
	if err != nil {
		b.Fatal(err)
	}
	id, err := c.CreateStore(context.Background(), "bench")
	if err != nil {
		b.Fatal(err)
	}
	return c, id
}

// BenchmarkWriteModel200: writing the 200-type model into OpenFGA (SQLite),
// and the unchanged check that skips the write.
func BenchmarkWriteModel200(b *testing.B) {
	c, id := benchServer(b)
	ctx := context.Background()
	model, _, err := fga.ComposeSkipping(fga.Module{Name: fga.CoreModuleName, Contents: fga.CoreModule}, modules(200))
	if err != nil {
		b.Fatal(err)
	}
	var current string
	b.Run("write", func(b *testing.B) {
		for b.Loop() {
			if current, _, err = c.WriteModelIfChanged(ctx, id, "", modelWithout(model)); err != nil {
				b.Fatal(err)
			}
			// Force the next round to write again.
			if _, _, err = c.WriteModelIfChanged(ctx, id, current, model); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("unchanged", func(b *testing.B) {
		cur, _, err := c.WriteModelIfChanged(ctx, id, "", model)
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if _, wrote, err := c.WriteModelIfChanged(ctx, id, cur, model); err != nil || wrote {
				b.Fatal(err, wrote)
			}
		}
	})
}

// BenchmarkGrantRevoke: one tuple written and deleted, then checked
// (HIGHER_CONSISTENCY), as a Store.spec.tuples change does.
func BenchmarkGrantRevoke(b *testing.B) {
	c, id := benchServer(b)
	ctx := context.Background()
	model, _, err := fga.ComposeSkipping(fga.Module{Name: fga.CoreModuleName, Contents: fga.CoreModule}, nil)
	if err != nil {
		b.Fatal(err)
	}
	if _, _, err := c.WriteModelIfChanged(ctx, id, "", model); err != nil {
		b.Fatal(err)
	}
	if err := c.Write(ctx, id, fga.AccountTuples("orgs", "acme", "alice", "", ""), nil); err != nil {
		b.Fatal(err)
	}
	acme := fga.AccountObject("orgs", "acme")
	grant := v1alpha1.Tuple{Object: acme, Relation: "member", User: "user:bob"}
	for b.Loop() {
		if err := c.Write(ctx, id, []v1alpha1.Tuple{grant}, nil); err != nil {
			b.Fatal(err)
		}
		if ok, err := c.Check(ctx, id, v1alpha1.Tuple{Object: acme, Relation: "get", User: "user:bob"}); err != nil || !ok {
			b.Fatal(err, ok)
		}
		if err := c.Write(ctx, id, nil, []v1alpha1.Tuple{grant}); err != nil {
			b.Fatal(err)
		}
	}
}

// modelWithout is model minus its last type, so writing it changes the
// store's model.
func modelWithout(m *openfgav1.AuthorizationModel) *openfgav1.AuthorizationModel {
	c := proto.Clone(m).(*openfgav1.AuthorizationModel)
	c.TypeDefinitions = c.TypeDefinitions[:len(c.TypeDefinitions)-1]
	return c
}

// BenchmarkAccountWrite: the one write of an account's tuples
// (fga.AccountTuples: creator, owner role, parent) into a store with the
// platform's core model, over gRPC as the security-operator sends it.
// server-ms/op is OpenFGA's CPU per write (its process's utime+stime).
func BenchmarkAccountWrite(b *testing.B) {
	srv := openfga.Start(b, openfga.Options{})
	c, err := fgaclient.New(srv.URL)
	if err != nil {
		b.Fatal(err)
	}
	if err := c.UseGRPC(srv.GRPC); err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	id, err := c.CreateStore(ctx, "bench")
	if err != nil {
		b.Fatal(err)
	}
	model, _, err := fga.ComposeSkipping(fga.Module{Name: fga.CoreModuleName, Contents: fga.CoreModule}, nil)
	if err != nil {
		b.Fatal(err)
	}
	if _, _, err := c.WriteModelIfChanged(ctx, id, "", model); err != nil {
		b.Fatal(err)
	}
	n := 0
	before := processCPU(b, srv.PID())
	for b.Loop() {
		n++
		if err := c.Write(ctx, id, fga.AccountTuples("org1", fmt.Sprintf("a%d", n), "alice", "orgs", "org1"), nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(processCPU(b, srv.PID())-before)/float64(time.Millisecond)/float64(n), "server-ms/op")
}

// processCPU is the CPU time a process has used (utime+stime of
// /proc/<pid>/stat, in Linux's fixed USER_HZ of 100 ticks a second).
func processCPU(b *testing.B, pid int) time.Duration {
	b.Helper()
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Skipf("no CPU time for process %d: %v", pid, err)
	}
	// Fields after the command name (which may hold spaces) in
	// parentheses: state is the first, utime and stime the 12th and 13th.
	_, rest, _ := strings.Cut(string(raw), ") ")
	f := strings.Fields(rest)
	if len(f) < 13 {
		b.Fatalf("/proc/%d/stat: %q", pid, raw)
	}
	var ticks int64
	for _, v := range f[11:13] {
		t, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			b.Fatalf("/proc/%d/stat: %v", pid, err)
		}
		ticks += t
	}
	return time.Duration(ticks) * 10 * time.Millisecond
}
