package e2e

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/meshplane/meshplane/core/test/framework"
)

// clusterAnnotation is set on every object the server returns.
const clusterAnnotation = "kcp.io/cluster"

// newCluster returns a fresh logical cluster name and a kubectl acting as the
// shard admin on it.
func newCluster(t *testing.T, s *framework.Server, prefix string) (string, *framework.Kubectl) {
	t.Helper()
	name := framework.UniqueName(prefix)
	t.Logf("using logical cluster %s", name)
	return name, s.KubectlFor(name)
}

func requireContains(t *testing.T, got, want, what string) {
	t.Helper()
	if !strings.Contains(got, want) {
		t.Fatalf("%s: expected output to contain %q, got:\n%s", what, want, got)
	}
}

func requireContainsFold(t *testing.T, got, want, what string) {
	t.Helper()
	if !strings.Contains(strings.ToLower(got), strings.ToLower(want)) {
		t.Fatalf("%s: expected output to contain %q (any case), got:\n%s", what, want, got)
	}
}

func requireEqual[T comparable](t *testing.T, got, want T, what string) {
	t.Helper()
	if got != want {
		t.Fatalf("%s: got %v, want %v", what, got, want)
	}
}

// requireFails checks that a kubectl run failed and that its stderr mentions
// each of wants (case-insensitively).
func requireFails(t *testing.T, stdout, stderr string, err error, what string, wants ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: expected kubectl to fail, it succeeded with stdout:\n%s\nstderr:\n%s", what, stdout, stderr)
	}
	for _, w := range wants {
		if !strings.Contains(strings.ToLower(stderr), strings.ToLower(w)) {
			t.Fatalf("%s: expected kubectl's error to mention %q, got stderr:\n%s\nstdout:\n%s", what, w, stderr, stdout)
		}
	}
}

// getConfigMap fetches a configmap with kubectl -o json.
func getConfigMap(t *testing.T, k *framework.Kubectl, ns, name string) *corev1.ConfigMap {
	t.Helper()
	out := k.Run(t, "get", "configmap", name, "-n", ns, "-o", "json")
	var cm corev1.ConfigMap
	if err := json.Unmarshal([]byte(out), &cm); err != nil {
		t.Fatalf("decoding configmap %s/%s from kubectl: %v\n%s", ns, name, err, out)
	}
	return &cm
}

func requireData(t *testing.T, cm *corev1.ConfigMap, want map[string]string, what string) {
	t.Helper()
	if fmt.Sprint(sortedMap(cm.Data)) != fmt.Sprint(sortedMap(want)) {
		t.Fatalf("%s: configmap %s has data %v, want %v", what, cm.Name, sortedMap(cm.Data), sortedMap(want))
	}
}

func sortedMap(m map[string]string) []string {
	var kv []string
	for k, v := range m {
		kv = append(kv, k+"="+v)
	}
	sort.Strings(kv)
	return kv
}

// table splits kubectl's table output into rows of whitespace-separated
// fields; row 0 is the header.
func table(out string) [][]string {
	var rows [][]string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			rows = append(rows, f)
		}
	}
	return rows
}

// tableRow returns the row whose first field is name and a function giving
// the cell under a header column.
func tableRow(t *testing.T, out, name string) (row []string, cell func(column string) string) {
	t.Helper()
	rows := table(out)
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

// names returns the non-empty lines of `-o name` output, sorted.
func names(out string) []string {
	var n []string
	for _, l := range strings.Split(out, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			n = append(n, l)
		}
	}
	sort.Strings(n)
	return n
}

// requireCode fails unless the response has one of the codes.
func requireCode(t *testing.T, r *framework.Response, what string, codes ...int) {
	t.Helper()
	if r.Err != nil {
		t.Fatalf("%s: expected HTTP %v, got %s", what, codes, r)
	}
	for _, c := range codes {
		if r.Code == c {
			return
		}
	}
	t.Fatalf("%s: expected HTTP %v, got %s", what, codes, r)
}

// requireStatus fails unless the response is a Status with the code and
// (when non-empty) reason.
func requireStatus(t *testing.T, r *framework.Response, what string, code int, reason string) {
	t.Helper()
	requireCode(t, r, what, code)
	st := r.Status(t)
	if st.Code != 0 && int(st.Code) != code {
		t.Fatalf("%s: Status.code is %d but the HTTP code is %d: %s", what, st.Code, code, r)
	}
	if reason != "" && string(st.Reason) != reason {
		t.Fatalf("%s: expected Status reason %q, got %q: %s", what, reason, st.Reason, r)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func configMapJSON(t *testing.T, name string, data map[string]string) []byte {
	t.Helper()
	return mustJSON(t, map[string]any{
		"apiVersion": "v1",
		"kind":       "ConfigMap",
		"metadata":   map[string]any{"name": name},
		"data":       data,
	})
}

func namespaceJSON(t *testing.T, name string) []byte {
	t.Helper()
	return mustJSON(t, map[string]any{
		"apiVersion": "v1",
		"kind":       "Namespace",
		"metadata":   map[string]any{"name": name},
	})
}
