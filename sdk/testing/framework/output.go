package framework

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// ClusterAnnotation is set on every object a kcp-compatible server returns:
// the object's logical cluster.
const ClusterAnnotation = "kcp.io/cluster"

// NewCluster returns a fresh logical cluster name and a kubectl acting as
// the shard admin on it (logical clusters exist implicitly).
func (s *Server) NewCluster(t testing.TB, prefix string) (string, *Kubectl) {
	t.Helper()
	name := UniqueName(prefix)
	t.Logf("using logical cluster %s", name)
	return name, s.KubectlFor(name)
}

// GetConfigMap fetches a configmap with kubectl -o json.
func (k *Kubectl) GetConfigMap(t testing.TB, ns, name string) *corev1.ConfigMap {
	t.Helper()
	out := k.Run(t, "get", "configmap", name, "-n", ns, "-o", "json")
	var cm corev1.ConfigMap
	if err := json.Unmarshal([]byte(out), &cm); err != nil {
		t.Fatalf("decoding configmap %s/%s from kubectl: %v\n%s", ns, name, err, out)
	}
	return &cm
}

// RequireData fails unless the configmap's data is want.
func RequireData(t testing.TB, cm *corev1.ConfigMap, want map[string]string, what string) {
	t.Helper()
	if fmt.Sprint(SortedMap(cm.Data)) != fmt.Sprint(SortedMap(want)) {
		t.Fatalf("%s: configmap %s has data %v, want %v", what, cm.Name, SortedMap(cm.Data), SortedMap(want))
	}
}

// SortedMap renders a map as sorted key=value strings.
func SortedMap(m map[string]string) []string {
	var kv []string
	for k, v := range m {
		kv = append(kv, k+"="+v)
	}
	sort.Strings(kv)
	return kv
}

// Table splits kubectl's table output into rows of whitespace-separated
// fields; row 0 is the header.
func Table(out string) [][]string {
	var rows [][]string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			rows = append(rows, f)
		}
	}
	return rows
}

// TableRow returns the row of kubectl's table output whose first field is
// name, and a function giving the cell under a header column.
func TableRow(t testing.TB, out, name string) (row []string, cell func(column string) string) {
	t.Helper()
	rows := Table(out)
	if len(rows) == 0 {
		t.Fatalf("empty table output, expected a row for %q", name)
	}
	header := rows[0]
	for _, r := range rows[1:] {
		if r[0] == name {
			row = r
		}
	}
	if row == nil {
		t.Fatalf("no row for %q in table:\n%s", name, out)
	}
	return row, func(column string) string {
		for i, h := range header {
			if h == column {
				if i < len(row) {
					return row[i]
				}
				return ""
			}
		}
		t.Fatalf("no column %q in table header %v:\n%s", column, header, out)
		return ""
	}
}

// Names returns the non-empty lines of `kubectl -o name` output, sorted.
func Names(out string) []string {
	var n []string
	for _, l := range strings.Split(out, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			n = append(n, l)
		}
	}
	sort.Strings(n)
	return n
}

// ConfigMapJSON is a v1 ConfigMap as JSON, for raw requests.
func ConfigMapJSON(t testing.TB, name string, data map[string]string) []byte {
	t.Helper()
	return MustJSON(t, map[string]any{
		"apiVersion": "v1",
		"kind":       "ConfigMap",
		"metadata":   map[string]any{"name": name},
		"data":       data,
	})
}

// NamespaceJSON is a v1 Namespace as JSON, for raw requests.
func NamespaceJSON(t testing.TB, name string) []byte {
	t.Helper()
	return MustJSON(t, map[string]any{
		"apiVersion": "v1",
		"kind":       "Namespace",
		"metadata":   map[string]any{"name": name},
	})
}
