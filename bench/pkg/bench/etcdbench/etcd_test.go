package etcdbench

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/meshplane/meshplane/bench/pkg/bench"
)

func TestEmbeddedPuts(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an embedded etcd")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	e, err := StartEmbedded(ctx)
	if err != nil {
		t.Fatal(err)
	}
	dir := e.dir
	defer e.Close()

	rep := bench.NewReport()
	err = Puts(ctx, Options{Endpoints: []string{e.Endpoint}, Puts: 50, Workers: 4, ValueSize: 300}, rep, "embedded etcd")
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]float64{}
	for _, m := range rep.Metrics {
		keys[m.Key] = m.Value
	}
	for _, k := range []string{"etcd_put_1c_per_s", "etcd_put_4c_per_s", "etcd_put_1c_p99_ms", "etcd_put_4c_p50_ms"} {
		if keys[k] <= 0 {
			t.Errorf("metric %s = %v", k, keys[k])
		}
	}
	if keys["etcd_value_bytes"] != 300 {
		t.Errorf("value size %v", keys["etcd_value_bytes"])
	}

	// The prefix was removed.
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{e.Endpoint}, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	resp, err := cli.Get(ctx, "/meshplane-bench/", clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		t.Fatal(err)
	}
	if resp.Count != 0 {
		t.Fatalf("%d keys left behind", resp.Count)
	}

	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("data dir %s not removed: %v", dir, err)
	}
	if !strings.HasPrefix(e.Endpoint, "http://127.0.0.1:") {
		t.Fatalf("endpoint %s", e.Endpoint)
	}
}
