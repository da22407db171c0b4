// Command resident-pages prints which parts of a running process's
// executable are resident, as Markdown tables: by region (ELF sections and
// the sub-tables of Go's function table) and by package or module (named
// symbols, a page's bytes shared among the symbols on it).
//
//	resident-pages --pid $(pgrep -n meshplane) --by module --top 15
//
// The kernel maps file pages in blocks (fault-around, 64 KiB by default,
// and whole page-cache folios), so a resident page was touched or lies
// next to one that was. Evict the binary from the page cache before
// starting the process to compare binaries (docs/benchmarks.md, issue 13).
package main

import (
	"flag"
	"fmt"
	"os"
	"sort"

	"github.com/meshplane/meshplane/bench/pkg/resident"
)

func main() {
	pid := flag.Int("pid", 0, "process to measure")
	bin := flag.String("binary", "", "its executable (default /proc/<pid>/exe)")
	by := flag.String("by", "module", "group symbols by package or module")
	top := flag.Int("top", 20, "groups to print")
	flag.Parse()
	if *pid <= 0 || (*by != "package" && *by != "module") {
		fmt.Fprintln(os.Stderr, "usage: resident-pages --pid PID [--binary PATH] [--by package|module] [--top N]")
		os.Exit(2)
	}
	r, err := resident.Measure(*pid, *bin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "resident-pages:", err)
		os.Exit(1)
	}
	const mib = 1 << 20
	fmt.Println("| region | resident MiB | size MiB |\n| --- | --- | --- |")
	var total uint64
	for _, g := range r.Regions {
		total += g.Resident
		if g.Resident >= mib/100 {
			fmt.Printf("| %s | %.2f | %.2f |\n", g.Name, float64(g.Resident)/mib, float64(g.End-g.Start)/mib)
		}
	}
	fmt.Printf("| total | %.2f | |\n\n", float64(total)/mib)

	groups := map[string]*resident.Share{}
	for _, s := range r.Symbols {
		k := s.Group
		if *by == "module" {
			k = resident.Module(k)
		}
		g := groups[k]
		if g == nil {
			g = &resident.Share{Group: k}
			groups[k] = g
		}
		g.Resident += s.Resident
		g.Size += s.Size
	}
	list := make([]resident.Share, 0, len(groups))
	for _, g := range groups {
		list = append(list, *g)
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Resident > list[j].Resident })
	fmt.Printf("| %s | resident MiB | size of its symbols MiB |\n| --- | --- | --- |\n", *by)
	for i, g := range list {
		if i == *top {
			break
		}
		fmt.Printf("| %s | %.2f | %.2f |\n", g.Group, float64(g.Resident)/mib, float64(g.Size)/mib)
	}
	names := make([]string, 0, len(r.Unnamed))
	for n := range r.Unnamed {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return r.Unnamed[names[i]] > r.Unnamed[names[j]] })
	for _, n := range names {
		if r.Unnamed[n] >= mib/10 {
			fmt.Printf("| (no symbol) in %s | %.2f | |\n", n, float64(r.Unnamed[n])/mib)
		}
	}
}
