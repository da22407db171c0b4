package bench

import (
	"strings"
	"testing"
)

func TestParseHeapAlloc(t *testing.T) {
	cases := []struct {
		name    string
		in      string
		want    int64
		wantErr bool
	}{
		{"profile", "heap profile: 1: 2 [3: 4] @ heap/1048576\n\n# runtime.MemStats\n# Alloc = 99\n# HeapAlloc = 143658016\n# HeapInuse = 1\n", 143658016, false},
		{"missing", "heap profile: 1: 2 [3: 4] @ heap/1048576\n", 0, true},
		{"garbage", "# HeapAlloc = lots\n", 0, true},
		{"negative", "# HeapAlloc = -1\n", 0, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseHeapAlloc(strings.NewReader(c.in))
			if (err != nil) != c.wantErr {
				t.Fatalf("err = %v, want error %v", err, c.wantErr)
			}
			if got != c.want {
				t.Fatalf("got %d, want %d", got, c.want)
			}
		})
	}
}
