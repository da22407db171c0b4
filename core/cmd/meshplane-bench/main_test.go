package main

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
	} {
		var out, errb bytes.Buffer
		if code := run(args, &out, &errb); code != 2 {
			t.Errorf("%v: exit %d, want 2 (stderr %q)", args, code, errb.String())
		}
		if !strings.HasPrefix(errb.String(), "meshplane-bench: ") || out.Len() != 0 {
			t.Errorf("%v: stdout %q stderr %q", args, out.String(), errb.String())
		}
	}
}

func TestHelpExitsZero(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"-h"}, &out, &errb); code != 0 {
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
}
