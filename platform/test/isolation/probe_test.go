package isolation

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
)

// probe is one attempt of an attacker: who tries what, and a run that
// performs it and judges the outcome.
type probe struct {
	area  string // access, wildcard, virtual workspace, graphql, impersonation, platform CRDs, takeover
	issue string // the item of issue 28 the probe belongs to; "" for the floor every release keeps
	who   string
	what  string
	run   func(ctx context.Context) verdict
}

// verdict is the outcome of one probe.
type verdict struct {
	leak   bool
	detail string // what came back, or what changed for the victim
	// serverError: a 5xx answer (refused, but the platform owes a
	// Kubernetes Status with the right 4xx code).
	serverError bool
}

func refusedVerdict(a answer) verdict {
	return verdict{leak: a.ok(), detail: a.String(), serverError: a.err == nil && a.code >= 500}
}

// refused is the common probe: the request must not succeed (any 2xx is
// a leak).
func (p *platform) refused(area, who, token, what string, c call) probe {
	c.token = token
	return probe{area: area, who: who, what: what + " (" + c.method + " " + c.url + ")", run: func(ctx context.Context) verdict {
		return refusedVerdict(p.do(ctx, c))
	}}
}

// noVictimData is a probe whose request may succeed but must not return
// anything of a victim (its markers: planted values, cluster ids).
func (p *platform) noVictimData(area, who, token, what string, c call, markers []string) probe {
	c.token = token
	return probe{area: area, who: who, what: what + " (" + c.method + " " + c.url + ")", run: func(ctx context.Context) verdict {
		a := p.do(ctx, c)
		v := refusedVerdict(a)
		v.leak = false
		if a.ok() {
			for _, m := range markers {
				if m != "" && strings.Contains(string(a.body), m) {
					v.leak, v.detail = true, fmt.Sprintf("the answer holds %q: %s", m, a)
				}
			}
		}
		return v
	}}
}

// result is a probe with its verdict.
type result struct {
	probe
	verdict
}

// runProbes runs the probes, workers at a time.
func runProbes(ctx context.Context, probes []probe, workers int) []result {
	results := make([]result, len(probes))
	sem := make(chan struct{}, workers)
	var wg sync.WaitGroup
	for i, pr := range probes {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			results[i] = result{probe: pr, verdict: pr.run(ctx)}
		}()
	}
	wg.Wait()
	return results
}

// report prints the figure and fails the test listing every leak (and
// every 5xx answer).
func report(t *testing.T, results []result) {
	t.Helper()
	type tally struct{ attempts, leaks int }
	areas := map[string]*tally{}
	var leaks, errs, unreached, failed []string
	for _, r := range results {
		if strings.HasPrefix(r.detail, "error: ") {
			failed = append(failed, fmt.Sprintf("%s: %s -> %s", r.who, r.what, r.detail))
		}
		a := areas[r.area]
		if a == nil {
			a = &tally{}
			areas[r.area] = a
		}
		a.attempts++
		if r.area == "takeover" {
			t.Logf("takeover probe %s: %s -> leak=%v: %s", r.who, r.what, r.leak, r.detail)
		}
		if r.leak {
			a.leaks++
			item := ""
			if r.issue != "" {
				item = " [issue 28: " + r.issue + "]"
			}
			leaks = append(leaks, fmt.Sprintf("LEAK%s %s: %s -> %s", item, r.who, r.what, r.detail))
		} else if r.serverError {
			errs = append(errs, fmt.Sprintf("5xx %s: %s -> %s", r.who, r.what, r.detail))
			if strings.Contains(r.detail, proxyUnreachable) {
				unreached = append(unreached, fmt.Sprintf("%s: %s -> %s", r.who, r.what, r.detail))
			}
		}
	}
	names := make([]string, 0, len(areas))
	for n := range areas {
		names = append(names, n)
	}
	sort.Strings(names)
	var lines []string
	for _, n := range names {
		lines = append(lines, fmt.Sprintf("  %-18s %5d attempts, %d leaks", n, areas[n].attempts, areas[n].leaks))
	}
	sort.Strings(leaks)
	sort.Strings(errs)
	figure := fmt.Sprintf("isolation: %d attempts, %d leaks", len(results), len(leaks))
	fmt.Println(figure)
	t.Logf("%s\n%s", figure, strings.Join(lines, "\n"))
	// A 5xx is a refusal all the same (nothing leaked), but the platform
	// owes a Kubernetes Status with the right code: listed, not failed.
	if len(errs) > 0 {
		t.Logf("%d probes were answered 5xx instead of a refusal:\n%s", len(errs), strings.Join(errs, "\n"))
	}
	// A request that got no answer (timeout, reset) decided nothing.
	if len(failed) > 0 {
		sort.Strings(failed)
		t.Logf("%d probes got no answer:\n%s", len(failed), strings.Join(failed[:min(len(failed), 20)], "\n"))
	}
	for _, l := range leaks {
		t.Errorf("%s", l)
	}
	// The front proxy's 502 decides nothing: the shard's answer was lost.
	for _, u := range unreached {
		t.Errorf("the front proxy answered 502: %s", u)
	}
}
