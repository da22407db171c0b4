package charts

import (
	"slices"
	"testing"
)

// TestShardsReadTheCacheServer: with two shards or more every core reads
// the others from the root shard's cache server (--replica-source=cache
// on each, as the launcher runs them); one shard has no replicas to read.
func TestShardsReadTheCacheServer(t *testing.T) {
	for _, tc := range []struct {
		shards string
		cores  []string
		want   bool
	}{
		{"1", []string{"StatefulSet/mp-core"}, false},
		{"3", []string{"StatefulSet/mp-core", "StatefulSet/mp-core-b", "StatefulSet/mp-core-c"}, true},
	} {
		out, err := render(t, umbrellaDir(t), "--set", "global.shards="+tc.shards)
		if err != nil {
			t.Fatal(err)
		}
		objs, err := decodeStrict(out)
		if err != nil {
			t.Fatal(err)
		}
		specs := podSpecs(objs)
		for _, name := range tc.cores {
			spec, ok := specs[name]
			if !ok {
				t.Fatalf("%s shards: no %s rendered", tc.shards, name)
			}
			if got := slices.Contains(spec.Containers[0].Args, "--replica-source=cache"); got != tc.want {
				t.Errorf("%s shards: %s has --replica-source=cache %v, want %v (args %v)", tc.shards, name, got, tc.want, spec.Containers[0].Args)
			}
		}
	}
}
