package app

import (
	"bytes"
	"strings"
	"testing"
)

func TestBadFlagsExitTwo(t *testing.T) {
	for _, args := range [][]string{
		{"--bogus"},
		{"--kubeconfig", "k", "--creates", "-1"},
		{"--kubeconfig", "k", "--workers", "0"},
		{"--kubeconfig", "k", "--cluster", "a", "--cluster-path", "root"},
		{"--kubeconfig", "k", "--cluster", "Not_Valid"},
		{"--kubeconfig", "k", "--etcd-endpoint", "http://x:2379", "--etcd-embedded"},
		{"--kubeconfig", "k", "--etcd-endpoint", "x:2379"},
		{"--kubeconfig", "k", "--start-cmd", "true"},
		{"--kubeconfig", "k", "--start-cmd", "true", "--ready-url", "https://h/readyz", "--pid", "1"},
		{"--kubeconfig", "k", "--ready-url", "https://h/readyz"},
		{"--kubeconfig", "k", "--timeout", "0s"},
		{"--kubeconfig", "k", "positional"},
		{"--kubeconfig", ""},
		{"--kubeconfig", "k", "--workspaces", "-1"},
		{"--kubeconfig", "k", "--workspace-tree", "-2"},
		{"--kubeconfig", "k", "--workspace-fanout", "0"},
		{"--kubeconfig", "k", "--workspace-workers", "0"},
		{"--kubeconfig", "k", "--vw-watch-rate", "0"},
		{"--kubeconfig", "k", "--vw-watch-consumers", "0"},
		{"--kubeconfig", "k", "--vw-list-consumers", "0"},
		{"--kubeconfig", "k", "--bindings", "-3"},
	} {
		var out, errb bytes.Buffer
		if code := Run(args, &out, &errb); code != 2 {
			t.Errorf("%v: exit %d, want 2 (stderr %q)", args, code, errb.String())
		}
		if !strings.HasPrefix(errb.String(), "meshplane-bench: ") || out.Len() != 0 {
			t.Errorf("%v: stdout %q stderr %q", args, out.String(), errb.String())
		}
	}
}

func TestHelpExitsZero(t *testing.T) {
	var out, errb bytes.Buffer
	if code := Run([]string{"-h"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if !strings.Contains(errb.String(), "--kubeconfig") || !strings.Contains(errb.String(), "-etcd-embedded") {
		t.Fatalf("usage: %s", errb.String())
	}
}

func TestValidFlags(t *testing.T) {
	o, err := parseFlags([]string{"--kubeconfig", "k", "--cluster-path", "root:org", "--clusters", "0", "--etcd-endpoint", "http://127.0.0.1:2379,https://h:2379"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if o.creates != 2000 || o.gets != 2000 || o.lists != 20 || o.listSize != 2000 || o.workers != 8 || o.clusterPath != "root:org" {
		t.Fatalf("defaults: %+v", o)
	}
	if eps := splitList(o.etcdEndpoint); len(eps) != 2 {
		t.Fatalf("endpoints %v", eps)
	}
	k := o.kcpOptions()
	if k.Workspaces != 1000 || k.TreeSize != 1000 || k.TreeFanout != 10 || k.Workers != 16 || k.Large != 0 ||
		k.Bindings != 20 || k.Lists != 50 || k.ListObjects != 100 || k.ListConsumers != 20 ||
		k.LargeObjects != 10000 || k.LargeConsumers != 100 || k.LargeLists != 10 ||
		k.WatchEvents != 200 || k.WatchConsumers != 100 || k.WatchRate != 50 || k.ObjectWorkers != 8 {
		t.Fatalf("kcp defaults: %+v", k)
	}
}

func TestKcpFlags(t *testing.T) {
	o, err := parseFlags([]string{"--kubeconfig", "k", "--workspaces", "50", "--workspace-tree", "0", "--workspaces-10k",
		"--bindings", "0", "--vw-lists", "0", "--vw-large=false", "--vw-watch-events", "0"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	k := o.kcpOptions()
	if k.Workspaces != 50 || k.TreeSize != 0 || k.Large != 10000 || !k.WorkspacesEnabled() || k.SharingEnabled() {
		t.Fatalf("%+v", k)
	}
	// Only the kcp phases: still something to measure.
	o, err = parseFlags([]string{"--kubeconfig", "k", "--creates", "0", "--gets", "0", "--lists", "0", "--clusters", "0", "--workspaces", "0", "--bindings", "3"}, &bytes.Buffer{})
	if err != nil || !o.kubeEnabled() {
		t.Fatalf("%v %+v", err, o)
	}
	// Nothing at all.
	_, err = parseFlags([]string{"--kubeconfig", "k", "--creates", "0", "--gets", "0", "--lists", "0", "--clusters", "0", "--workspaces", "0",
		"--bindings", "0", "--vw-lists", "0", "--vw-large=false", "--vw-watch-events", "0"}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "nothing to measure") {
		t.Fatalf("want nothing to measure, got %v", err)
	}
}
