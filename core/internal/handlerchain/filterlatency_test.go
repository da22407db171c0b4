package handlerchain

import (
	"bufio"
	"context"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/endpoints/metrics"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/component-base/metrics/legacyregistry"
)

const filterMetric = "apiserver_request_filter_duration_seconds"

// filterSeries reads /metrics as the server serves it (legacyregistry)
// and returns, per series of filterMetric other than buckets (the _count
// and _sum of each filter), the count, and per filter its buckets' le
// labels.
func filterSeries(t *testing.T) (counts map[string]string, buckets map[string][]string) {
	t.Helper()
	rec := httptest.NewRecorder()
	legacyregistry.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	counts, buckets = map[string]string{}, map[string][]string{}
	sc := bufio.NewScanner(rec.Body)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, filterMetric) {
			continue
		}
		series, value, _ := strings.Cut(line, " ")
		if name, labels, ok := strings.Cut(series, "{"); ok && name == filterMetric+"_bucket" {
			filter, le, _ := strings.Cut(labels, ",")
			buckets[filter] = append(buckets[filter], strings.TrimSuffix(le, "}"))
			continue
		}
		if strings.HasPrefix(series, filterMetric+"_count") {
			counts[series] = value
		}
	}
	return counts, buckets
}

// countDelta is after's counts minus before's, as numbers in text.
func countDelta(t *testing.T, before, after map[string]string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for k, v := range after {
		var a, b int
		fmt.Sscan(v, &a)
		fmt.Sscan(before[k], &b)
		if a != b {
			out[k] = fmt.Sprint(a - b)
		}
	}
	return out
}

// The filter latencies measured without a request copy per filter give
// /metrics the same series (name, filter labels, buckets) with the same
// counts as kube's filterlatency for the same requests, authenticated
// and not.
func TestFilterLatencyMetricAsKubes(t *testing.T) {
	metrics.Register()
	auth := authenticator.RequestFunc(func(r *http.Request) (*authenticator.Response, bool, error) {
		if r.Header.Get("Authorization") != "Bearer ok" {
			return nil, false, nil
		}
		return &authenticator.Response{User: &user.DefaultInfo{Name: "u", Groups: []string{user.AllAuthenticated}}}, true, nil
	})
	run := func(build func(http.Handler, *genericapiserver.Config, *Signals) http.Handler) (map[string]string, map[string][]string) {
		withAuth := func(h http.Handler, c *genericapiserver.Config, s *Signals) http.Handler {
			c.Authentication.Authenticator = auth
			return build(h, c, s)
		}
		url, client, _ := serveChain(t, time.Minute, nil, withAuth, func(w http.ResponseWriter, r *http.Request) {})
		before, _ := filterSeries(t)
		for i := range 7 {
			req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, url+"/api/v1/namespaces/default/configmaps/c", nil)
			if err != nil {
				t.Fatal(err)
			}
			want := http.StatusUnauthorized
			if i%3 != 0 {
				req.Header.Set("Authorization", "Bearer ok")
				want = http.StatusOK
			}
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != want {
				t.Fatalf("request %d: status %d, want %d", i, resp.StatusCode, want)
			}
		}
		after, buckets := filterSeries(t)
		return countDelta(t, before, after), buckets
	}
	kubeCounts, kubeBuckets := run(kubeChain)
	counts, buckets := run(Build)
	if len(kubeCounts) == 0 {
		t.Fatalf("kube's chain recorded no %s", filterMetric)
	}
	if !maps.Equal(counts, kubeCounts) {
		t.Errorf("%s counts added: %v; kube's chain added %v", filterMetric, counts, kubeCounts)
	}
	if !maps.EqualFunc(buckets, kubeBuckets, slices.Equal) {
		t.Errorf("%s buckets %v, kube's %v", filterMetric, buckets, kubeBuckets)
	}
	// 3 of the 7 requests fail authentication: they pass only it.
	for filter, n := range map[string]string{"authentication": "7", "audit": "4", "authorization": "4"} {
		if got := counts[fmt.Sprintf(`%s_count{filter=%q}`, filterMetric, filter)]; got != n {
			t.Errorf("filter %s counted %s times, want %s (all: %v)", filter, got, n, counts)
		}
	}
	t.Logf("counts added per chain: %v", counts)
}
