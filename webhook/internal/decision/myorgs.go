package decision

import (
	"context"
	"sort"
	"sync"

	"github.com/meshplane/meshplane/apis/fga"
	"github.com/meshplane/meshplane/webhook/internal/clusters"
	"github.com/meshplane/meshplane/webhook/internal/mapping"
	"github.com/meshplane/meshplane/webhook/internal/myorgs"
	"github.com/meshplane/meshplane/webhook/internal/orgs"
)

// checkWorkers bounds the Checks one Organizations call runs at once.
const checkWorkers = 8

// Organizations returns, sorted, the organizations whose Account in
// root:orgs user (with groups) may read by name, decided as decideOrg
// decides that read: the founder, or relation get in the organization's
// own store. idx only proposes candidates. At most limit candidates are
// decided; truncated tells that there were more.
func (d *Decider) Organizations(ctx context.Context, idx *myorgs.Index, user string, groups []string, limit int) (names []string, truncated bool, err error) {
	orgsCluster, err := d.Orgs.Cluster(ctx)
	if err != nil {
		return nil, false, err
	}
	c := idx.Candidates(user, groups, orgsCluster, func(cluster string) string {
		info, _, ok := d.Clusters.Get(cluster)
		if !ok {
			return ""
		}
		org, ok := clusters.OrgOf(info.Path)
		if !ok {
			return ""
		}
		return org
	})
	if len(c.Founded) > limit {
		c.Founded, c.Granted, truncated = c.Founded[:limit], nil, true
	}
	if rest := limit - len(c.Founded); len(c.Granted) > rest {
		c.Granted, truncated = c.Granted[:rest], true
	}
	names = append(names, c.Founded...)
	var mu sync.Mutex
	var wg sync.WaitGroup
	work := make(chan string)
	for range min(checkWorkers, len(c.Granted)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for org := range work {
				if d.memberOf(ctx, orgsCluster, user, groups, org) {
					mu.Lock()
					names = append(names, org)
					mu.Unlock()
				}
			}
		}()
	}
	for _, org := range c.Granted {
		work <- org
	}
	close(work)
	wg.Wait()
	sort.Strings(names)
	return names, truncated, nil
}

// memberOf checks relation get on the organization's Account in its store;
// anything that cannot be decided is false.
func (d *Decider) memberOf(ctx context.Context, orgsCluster, user string, groups []string, org string) bool {
	info, ok := d.Clusters.ByPath(orgs.Path + ":" + org)
	if !ok || info.StoreID == "" || info.OriginCluster != orgsCluster || info.Account != org {
		return false
	}
	res := d.check(ctx, info, mapping.Query{User: fga.UserID(user), Object: fga.AccountObject(orgsCluster, org), Relation: "get"}, groups)
	return res.Status.Allowed
}
