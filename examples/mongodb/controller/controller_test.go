package controller

import (
	"testing"
)

func TestFirstHost(t *testing.T) {
	for uri, want := range map[string]struct {
		host string
		port int32
		ok   bool
	}{
		"mongodb://a-svc.ns.svc.cluster.local:27017":              {"a-svc.ns.svc.cluster.local", 27017, true},
		"mongodb://a-0.a-svc:27018,a-1.a-svc:27018/?replicaSet=a": {"a-0.a-svc", 27018, true},
		"mongodb://solo":       {"solo", 27017, true},
		"postgres://x:5432":    {"", 0, false},
		"":                     {"", 0, false},
		"mongodb://h:notaport": {"", 0, false},
	} {
		host, port, ok := firstHost(uri)
		if host != want.host || port != want.port || ok != want.ok {
			t.Errorf("firstHost(%q) = %q %d %v, want %+v", uri, host, port, ok, want)
		}
	}
}

func TestDownstreamName(t *testing.T) {
	a := DownstreamName("c1", "ns", "db")
	if a != DownstreamName("c1", "ns", "db") || len(a) != len("mdb-")+16 {
		t.Errorf("not stable or wrong length: %s", a)
	}
	for _, other := range []string{DownstreamName("c2", "ns", "db"), DownstreamName("c1", "ns2", "db"), DownstreamName("c1", "ns", "db2"), DownstreamName("c1", "n", "sdb")} {
		if other == a {
			t.Errorf("%s collides", other)
		}
	}
}
