package resident

import (
	"debug/elf"
	"os"
	"testing"
)

func TestPackageOf(t *testing.T) {
	for name, want := range map[string]string{
		"net/http.(*conn).serve":                               "net/http",
		"k8s.io/api/core/v1.(*Pod).Marshal":                    "k8s.io/api/core/v1",
		"type:*k8s.io/api/core/v1.Pod":                         "k8s.io/api/core/v1",
		"crypto/internal/fips140/pbkdf2.Key[go.shape.*uint8]":  "crypto/internal/fips140/pbkdf2",
		"runtime.main":                                         "runtime",
		"go:string.*":                                          "(linker)",
		"github.com/google/cel-go/common/stdlib.init.0":        "github.com/google/cel-go/common/stdlib",
		"go.etcd.io/etcd/server/v3/embed.(*Etcd).serveClients": "go.etcd.io/etcd/server/v3/embed",
	} {
		if got := PackageOf(name); got != want {
			t.Errorf("PackageOf(%q) = %q, want %q", name, got, want)
		}
	}
	for pkg, want := range map[string]string{
		"net/http":                               "Go standard library",
		"k8s.io/api/core/v1":                     "k8s.io/api",
		"go.etcd.io/etcd/server/v3/embed":        "go.etcd.io/etcd",
		"github.com/google/cel-go/common/stdlib": "github.com/google/cel-go",
		"google.golang.org/protobuf/internal":    "google.golang.org/protobuf",
	} {
		if got := Module(pkg); got != want {
			t.Errorf("Module(%q) = %q, want %q", pkg, got, want)
		}
	}
}

// TestMeasureSelf measures the test binary (stripped: regions only): the
// code running now is resident.
func TestMeasureSelf(t *testing.T) {
	r, err := Measure(os.Getpid(), "")
	if err != nil {
		t.Fatal(err)
	}
	var text *Region
	for i := range r.Regions {
		if r.Regions[i].Name == ".text" {
			text = &r.Regions[i]
		}
	}
	if text == nil || text.Resident == 0 || text.Resident > text.End-text.Start {
		t.Fatalf(".text region %+v", text)
	}
}

// TestAttribute shares resident pages among the symbols on them, counts
// nested symbols' bytes once in the unnamed rest, and leaves pages that
// are not present out.
func TestAttribute(t *testing.T) {
	sym := func(name string, start, size uint64) elf.Symbol {
		return elf.Symbol{Name: name, Value: start, Size: size, Info: elf.ST_INFO(elf.STB_GLOBAL, elf.STT_FUNC)}
	}
	syms := []elf.Symbol{
		sym("a.F", 0x1000, 0x800),       // first half of page 0x1000
		sym("b.(*T).M", 0x1800, 0x1000), // second half of 0x1000, first half of 0x2000
		sym("b.table", 0x3000, 0x1000),  // all of 0x3000, not present
		sym("c.outer", 0x4000, 0x1000),  // 0x4000, with a nested symbol
		sym("c.inner", 0x4100, 0x100),
	}
	present := map[uint64]bool{0x1000: true, 0x2000: true, 0x4000: true}
	regions := []Region{{Name: ".text", Start: 0x1000, End: 0x5000}}
	shares, unnamed := attribute(present, syms, regions)
	got := map[string]Share{}
	for _, s := range shares {
		got[s.Group] = s
	}
	want := map[string]Share{
		"a": {Group: "a", Resident: 0x800, Size: 0x800},
		"b": {Group: "b", Resident: 0x1000, Size: 0x2000},
		"c": {Group: "c", Resident: 0x1100, Size: 0x1100},
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: %+v, want %+v", k, got[k], w)
		}
	}
	// 0x2000's second half has no symbol.
	if unnamed[".text"] != 0x800 {
		t.Errorf("unnamed .text bytes %#x, want 0x800", unnamed[".text"])
	}
}
