package securityoperator

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/meshplane/meshplane/apis/fga"
)

// fakeDiscovery counts the discoveries per workspace and answers with
// what is bound there.
type fakeDiscovery struct {
	calls map[string]int
	bound map[string][]fga.Resource
	// unserved workspaces answer nothing, not complete.
	unserved map[string]bool
	err      error
}

func (d *fakeDiscovery) list(_ context.Context, ws string) ([]fga.Resource, bool, error) {
	d.calls[ws]++
	if d.err != nil {
		return nil, false, d.err
	}
	if d.unserved[ws] {
		return nil, false, nil
	}
	return d.bound[ws], true, nil
}

func TestBoundCache(t *testing.T) {
	widgets := fga.Resource{Group: "example.dev", Plural: "widgets", Singular: "widget", Namespaced: true}
	d := &fakeDiscovery{calls: map[string]int{}, bound: map[string][]fga.Resource{}, unserved: map[string]bool{}}
	paths := map[string]string{"org1cluster": "root:orgs:org1"}
	c := newBoundCache(d.list, func(cl string) (string, bool) { p, ok := paths[cl]; return p, ok })
	now := time.Unix(1000, 0)
	c.now = func() time.Time { return now }
	ctx := context.Background()
	get := func(ws string) []fga.Resource {
		t.Helper()
		rs, err := c.resources(ctx, ws)
		if err != nil {
			t.Fatal(err)
		}
		return rs
	}

	// Resyncs within the ttl discover once.
	for range 3 {
		get("org1cluster")
		get("root:orgs:org1")
		now = now.Add(30 * time.Second)
	}
	if d.calls["org1cluster"] != 1 || d.calls["root:orgs:org1"] != 1 {
		t.Fatalf("discoveries without a change: %v, want one per workspace", d.calls)
	}

	// A binding in the organization: read again, by cluster and by path;
	// during settle every time (discovery may lag the binding), then kept.
	d.bound["org1cluster"] = []fga.Resource{widgets}
	d.bound["root:orgs:org1"] = []fga.Resource{widgets}
	c.changed("org1cluster")
	now = now.Add(time.Second)
	if rs := get("org1cluster"); len(rs) != 1 {
		t.Fatalf("after a change: %v, want the new binding", rs)
	}
	get("org1cluster")
	get("root:orgs:org1")
	if d.calls["org1cluster"] != 3 || d.calls["root:orgs:org1"] != 2 {
		t.Fatalf("discoveries during settle: %v, want each read", d.calls)
	}
	now = now.Add(boundSettle)
	get("org1cluster")
	get("org1cluster")
	if d.calls["org1cluster"] != 4 {
		t.Fatalf("discoveries after settle: %d, want 4 (one more, then cached)", d.calls["org1cluster"])
	}

	// Another workspace's change leaves this one cached.
	c.changed("other")
	get("org1cluster")
	if d.calls["org1cluster"] != 4 {
		t.Fatalf("another cluster's change read org1 again (%d)", d.calls["org1cluster"])
	}

	// After the ttl, without any event (a missed one), read again.
	now = now.Add(boundTTL)
	get("org1cluster")
	if d.calls["org1cluster"] != 5 {
		t.Fatalf("discoveries after the ttl: %d, want 5", d.calls["org1cluster"])
	}

	// A change while discovering: the answer is not kept.
	now = now.Add(boundSettle)
	c.list = func(ctx context.Context, ws string) ([]fga.Resource, bool, error) {
		c.changed("unrelated")
		return d.list(ctx, ws)
	}
	get("fresh")
	c.list = d.list
	get("fresh")
	if d.calls["fresh"] != 2 {
		t.Fatalf("an answer read during a change was kept (%d discoveries)", d.calls["fresh"])
	}

	// Errors are not kept.
	d.err = errors.New("boom")
	if _, err := c.resources(ctx, "broken"); err == nil {
		t.Fatal("no error")
	}
	d.err = nil
	get("broken")
	if d.calls["broken"] != 2 {
		t.Fatalf("an error was kept (%d discoveries)", d.calls["broken"])
	}

	// A workspace still initializing (not served) is asked again: its
	// bindings may have been made before, their events long past.
	d.unserved["init"] = true
	get("init")
	d.unserved["init"] = false
	d.bound["init"] = []fga.Resource{widgets}
	if rs := get("init"); len(rs) != 1 || d.calls["init"] != 2 {
		t.Fatalf("an unserved workspace's answer was kept (%v, %d discoveries)", rs, d.calls["init"])
	}
}
