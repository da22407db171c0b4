// Package resident tells which pages of a process's executable are resident
// (present in its page tables, as /proc/<pid>/smaps counts them) and to
// which parts of the binary they belong: ELF sections, the sub-tables of
// Go's function table (.gopclntab) and, through the symbol table, Go
// packages. Linux only; reading another process's pagemap needs the same
// user (or root).
package resident

import (
	"bufio"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
)

const pageSize = 4096

// Region is a named address range of the binary and how much of it is
// resident.
type Region struct {
	Name       string
	Start, End uint64
	Resident   uint64 // bytes
}

// Share is the resident part of the symbols of one group (a package, or
// what the caller groups packages into) and their total size.
type Share struct {
	Group          string
	Resident, Size uint64
}

// Report is the residency of a process's executable.
type Report struct {
	Regions []Region
	// Symbols are the resident bytes of named symbols by package;
	// Unnamed are the resident bytes no symbol covers (type descriptors,
	// strings, the function table's contents), by section.
	Symbols []Share
	Unnamed map[string]uint64
}

// Measure reads the executable mappings of process pid (binary is its
// executable's path; empty: /proc/<pid>/exe).
func Measure(pid int, binaryPath string) (*Report, error) {
	if binaryPath == "" {
		binaryPath = fmt.Sprintf("/proc/%d/exe", pid)
	}
	f, err := elf.Open(binaryPath)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	present, err := presentPages(pid)
	if err != nil {
		return nil, err
	}
	r := &Report{Unnamed: map[string]uint64{}}
	for _, s := range f.Sections {
		if s.Addr == 0 || s.Size == 0 || s.Flags&elf.SHF_ALLOC == 0 || s.Type == elf.SHT_NOBITS {
			continue
		}
		if s.Name == ".gopclntab" {
			sub, err := pclntabRegions(f, s)
			if err != nil {
				return nil, err
			}
			r.Regions = append(r.Regions, sub...)
			continue
		}
		r.Regions = append(r.Regions, Region{Name: s.Name, Start: s.Addr, End: s.Addr + s.Size})
	}
	for i := range r.Regions {
		r.Regions[i].Resident = residentIn(present, r.Regions[i].Start, r.Regions[i].End)
	}
	syms, err := f.Symbols()
	if err != nil && !errors.Is(err, elf.ErrNoSymbols) { // a stripped binary: regions only
		return nil, err
	}
	r.Symbols, r.Unnamed = attribute(present, syms, r.Regions)
	return r, nil
}

// presentPages are the page addresses of the process's mappings of its
// executable that are present (pagemap bit 63).
func presentPages(pid int) (map[uint64]bool, error) {
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	if err != nil {
		return nil, err
	}
	maps, err := os.Open(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		return nil, err
	}
	defer maps.Close()
	pagemap, err := os.Open(fmt.Sprintf("/proc/%d/pagemap", pid))
	if err != nil {
		return nil, err
	}
	defer pagemap.Close()
	present := map[uint64]bool{}
	sc := bufio.NewScanner(maps)
	entry := make([]byte, 8)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || fields[5] != exe {
			continue
		}
		lo, hi, ok := strings.Cut(fields[0], "-")
		if !ok {
			continue
		}
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("maps line %q", sc.Text())
		}
		for a := start; a < end; a += pageSize {
			if _, err := pagemap.ReadAt(entry, int64(a/pageSize*8)); err != nil {
				return nil, fmt.Errorf("pagemap: %w", err)
			}
			if binary.LittleEndian.Uint64(entry)&(1<<63) != 0 {
				present[a] = true
			}
		}
	}
	return present, sc.Err()
}

func residentIn(present map[uint64]bool, start, end uint64) uint64 {
	var n uint64
	for a := start &^ (pageSize - 1); a < end; a += pageSize {
		if present[a] {
			n += min(a+pageSize, end) - max(a, start)
		}
	}
	return n
}

// pclntabRegions splits Go's function table by its header (Go 1.20+
// layout): function names, compilation units, file names, the pc-value
// tables, and the function entries with their data.
func pclntabRegions(f *elf.File, s *elf.Section) ([]Region, error) {
	head := make([]byte, 8+8*8)
	if _, err := s.ReadAt(head, 0); err != nil {
		return nil, err
	}
	if magic := binary.LittleEndian.Uint32(head); magic != 0xfffffff1 || head[7] != 8 {
		return []Region{{Name: s.Name, Start: s.Addr, End: s.Addr + s.Size}}, nil
	}
	off := func(i int) uint64 { return binary.LittleEndian.Uint64(head[8+8*i:]) }
	// nfunc, nfiles, textStart, funcnameOffset, cuOffset, filetabOffset, pctabOffset, pclnOffset
	bounds := []struct {
		name string
		at   uint64
	}{
		{".gopclntab (header)", 0}, {".gopclntab function names", off(3)}, {".gopclntab compilation units", off(4)},
		{".gopclntab file names", off(5)}, {".gopclntab pc-value tables", off(6)}, {".gopclntab functions and their data", off(7)},
		{"", s.Size},
	}
	var out []Region
	for i := 0; i+1 < len(bounds); i++ {
		if bounds[i+1].at > bounds[i].at {
			out = append(out, Region{Name: bounds[i].name, Start: s.Addr + bounds[i].at, End: s.Addr + bounds[i+1].at})
		}
	}
	return out, nil
}

// attribute shares each resident page among the symbols covering it.
func attribute(present map[uint64]bool, syms []elf.Symbol, regions []Region) ([]Share, map[string]uint64) {
	type sym struct {
		start, end uint64
		pkg        string
	}
	var list []sym
	for _, s := range syms {
		t := elf.ST_TYPE(s.Info)
		if s.Size == 0 || s.Value == 0 || (t != elf.STT_FUNC && t != elf.STT_OBJECT) || regionOf(regions, s.Value) == "" {
			continue // not in the file (.bss) or not code or data
		}
		list = append(list, sym{s.Value, s.Value + s.Size, PackageOf(s.Name)})
	}
	sort.Slice(list, func(i, j int) bool { return list[i].start < list[j].start })
	shares := map[string]*Share{}
	for _, s := range list {
		sh := shares[s.pkg]
		if sh == nil {
			sh = &Share{Group: s.pkg}
			shares[s.pkg] = sh
		}
		sh.Size += s.end - s.start
	}
	// Symbols may nest (a table symbol holding many); maxEnd[i] is the
	// furthest end among list[:i+1], so a page's symbols start after the
	// first index whose maxEnd passes the page.
	maxEnd := make([]uint64, len(list))
	var m uint64
	for i, s := range list {
		m = max(m, s.end)
		maxEnd[i] = m
	}
	unnamed := map[string]uint64{}
	pages := make([]uint64, 0, len(present))
	for a := range present {
		pages = append(pages, a)
	}
	sort.Slice(pages, func(i, j int) bool { return pages[i] < pages[j] })
	for _, a := range pages {
		covered := make([]bool, pageSize/64) // 64-byte granules: nested symbols count once
		i := sort.Search(len(list), func(i int) bool { return maxEnd[i] > a })
		for ; i < len(list) && list[i].start < a+pageSize; i++ {
			lo, hi := max(list[i].start, a), min(list[i].end, a+pageSize)
			if hi <= lo {
				continue
			}
			shares[list[i].pkg].Resident += hi - lo
			for g := (lo - a) / 64; g < (hi-a+63)/64; g++ {
				covered[g] = true
			}
		}
		var free uint64
		for _, c := range covered {
			if !c {
				free += 64
			}
		}
		if free > 0 {
			name := regionOf(regions, a)
			if name == "" {
				name = "(outside the file's sections)"
			}
			unnamed[name] += free
		}
	}
	out := make([]Share, 0, len(shares))
	for _, s := range shares {
		out = append(out, *s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Resident > out[j].Resident })
	return out, unnamed
}

func regionOf(regions []Region, a uint64) string {
	for _, r := range regions {
		if a < r.End && a+pageSize > r.Start {
			return r.Name
		}
	}
	return ""
}

// PackageOf is the Go package of a symbol name: "net/http.(*conn).serve"
// is net/http, "type:*k8s.io/api/core/v1.Pod" k8s.io/api/core/v1;
// go:string.* and other linker-made data are "(linker)".
func PackageOf(name string) string {
	n := strings.TrimPrefix(name, "type:")
	n = strings.TrimLeft(n, "*[]")
	if strings.HasPrefix(n, "go:") || strings.HasPrefix(n, "$") || strings.HasPrefix(n, "_") {
		return "(linker)"
	}
	prefix := n // the path part ends before a generic's or method's brackets
	if i := strings.IndexAny(n, "[("); i >= 0 {
		prefix = n[:i]
	}
	slash := strings.LastIndex(prefix, "/")
	if dot := strings.Index(n[slash+1:], "."); dot >= 0 {
		return n[:slash+1+dot]
	}
	return n
}

// Module groups a package into the unit a dependency decision is about:
// the Go standard library, a k8s.io repository, or a module path's first
// three elements.
func Module(pkg string) string {
	parts := strings.Split(pkg, "/")
	switch {
	case strings.HasPrefix(pkg, "("):
		return pkg
	case !strings.Contains(parts[0], "."):
		return "Go standard library"
	case parts[0] == "k8s.io" || parts[0] == "go.etcd.io" || parts[0] == "sigs.k8s.io" || parts[0] == "google.golang.org":
		return strings.Join(parts[:min(2, len(parts))], "/")
	}
	return strings.Join(parts[:min(3, len(parts))], "/")
}
