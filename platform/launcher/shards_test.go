package launcher

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestShardsFlag: 1 to 4 shards, each extra shard on its own ports (b on
// 16..18 as before, c and d in the extension 20..25), the port range
// widened only beyond two shards; 0 and 5 are refused.
func TestShardsFlag(t *testing.T) {
	for _, bad := range []string{"0", "5", "-1"} {
		_, err := ParseFlags([]string{"--bin-dir", "/bin", "--shards", bad})
		if err == nil || !strings.Contains(err.Error(), "--shards "+bad) {
			t.Errorf("--shards %s: error %v, want one naming --shards %s", bad, err, bad)
		}
	}
	// prepare refuses before it touches the root directory.
	c := Config{RootDir: "/nonexistent/never-made", Ports: Ports{Base: 23500}, Shards: 5}
	if err := c.prepare(); err == nil || !strings.Contains(err.Error(), "--shards 5") {
		t.Errorf("prepare with 5 shards: %v", err)
	}

	const base = 23500
	want := map[int]struct {
		last   int
		shards map[string][3]int // secure, etcd client, etcd peer
	}{
		1: {base + 19, map[string][3]int{}},
		2: {base + 19, map[string][3]int{"b": {base + 16, base + 17, base + 18}}},
		3: {base + 29, map[string][3]int{"b": {base + 16, base + 17, base + 18}, "c": {base + 20, base + 21, base + 22}}},
		4: {base + 29, map[string][3]int{"b": {base + 16, base + 17, base + 18}, "c": {base + 20, base + 21, base + 22}, "d": {base + 23, base + 24, base + 25}}},
	}
	for n, w := range want {
		c, err := ParseFlags([]string{"--bin-dir", "/bin", "--port-base", strconv.Itoa(base), "--shards", strconv.Itoa(n)})
		if err != nil {
			t.Fatalf("--shards %d: %v", n, err)
		}
		if c.Ports.Last() != w.last {
			t.Errorf("--shards %d: range ends at %d, want %d", n, c.Ports.Last(), w.last)
		}
		if !slices.Contains(mountArgs(&c), fmt.Sprintf("127.0.0.1:%d-%d", base, w.last)) {
			t.Errorf("--shards %d: mounts do not reserve the whole range: %v", n, mountArgs(&c))
		}
		comps := shardComponents(&c)
		got := map[string][3]int{}
		env := map[string]string{}
		for _, comp := range comps {
			for _, e := range comp.Env {
				env[e.Key] = e.Value
			}
			name, ok := strings.CutPrefix(comp.Name, "shard-")
			if !ok {
				continue
			}
			got[name] = [3]int{argInt(t, comp.Args, "--secure-port"), argInt(t, comp.Args, "--embedded-etcd-client-port"), argInt(t, comp.Args, "--embedded-etcd-peer-port")}
			if i := slices.Index(comp.Args, "--shard-name"); i < 0 || comp.Args[i+1] != name {
				t.Errorf("%s is started without --shard-name %s: %v", comp.Name, name, comp.Args)
			}
			// Every shard reads the others from the root shard's cache server.
			if !slices.Contains(comp.Args, "--replica-source=cache") {
				t.Errorf("%s is started without --replica-source=cache: %v", comp.Name, comp.Args)
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(w.shards) {
			t.Errorf("--shards %d: shard ports %v, want %v", n, got, w.shards)
		}
		if n == 1 {
			if len(comps) != 0 {
				t.Errorf("one shard starts %d shard components", len(comps))
			}
			continue
		}
		if comps[len(comps)-1].Name != "front-proxy" || argInt(t, comps[len(comps)-1].Args, "--secure-port") != base+19 {
			t.Errorf("--shards %d: the front proxy is not last on %d: %v", n, base+19, comps[len(comps)-1])
		}
		// platform.env names every shard and its URL.
		if env["SHARD_NAMES"] != strings.Join(ShardNames(n), ",") || strings.Count(env["SHARD_NAMES"], ",") != n-1 {
			t.Errorf("--shards %d: SHARD_NAMES=%q", n, env["SHARD_NAMES"])
		}
		for _, name := range ShardNames(n) {
			wantURL := fmt.Sprintf("https://127.0.0.1:%d", base)
			if name != "root" {
				wantURL = fmt.Sprintf("https://127.0.0.1:%d", w.shards[name][0])
			}
			if key := "SHARD_" + strings.ToUpper(name) + "_URL"; env[key] != wantURL {
				t.Errorf("--shards %d: %s=%q, want %q", n, key, env[key], wantURL)
			}
		}
	}
}

func argInt(t *testing.T, args []string, flag string) int {
	t.Helper()
	i := slices.Index(args, flag)
	if i < 0 || i+1 >= len(args) {
		t.Fatalf("no %s in %v", flag, args)
	}
	n, err := strconv.Atoi(args[i+1])
	if err != nil {
		t.Fatal(err)
	}
	return n
}
