// Package resources tells the model's view of a resource named in a
// review (group, version, plural): its singular name and scope. The
// built-in kinds are known; others are read from the logical cluster's
// discovery (<core>/clusters/<cluster>/apis/<group>/<version>) and kept.
package resources

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/meshplane/meshplane/apis/fga"
)

// ErrUnknown is returned for a resource discovery does not list.
var ErrUnknown = fmt.Errorf("resource not served")

// Resolver finds resources. Its zero value knows the built-in kinds only.
type Resolver struct {
	// Host is the core's base URL; HTTP its client. Without them only
	// built-in kinds resolve.
	Host string
	HTTP *http.Client
	// TTL is how long a discovery answer is kept (default 1 minute).
	TTL time.Duration

	mu      sync.Mutex
	entries map[string]entry
}

type entry struct {
	list    map[string]fga.Resource
	fetched time.Time
}

var builtin = func() map[string]fga.Resource {
	m := map[string]fga.Resource{}
	for _, r := range append([]fga.Resource{fga.AccountResource}, fga.BuiltinResources...) {
		m[r.Group+"/"+r.Plural] = r
	}
	return m
}()

// Lookup returns the resource.
func (r *Resolver) Lookup(ctx context.Context, cluster, group, version, plural string) (fga.Resource, error) {
	if res, ok := builtin[group+"/"+plural]; ok {
		return res, nil
	}
	if r.HTTP == nil || group == "" {
		return fga.Resource{}, ErrUnknown
	}
	key := cluster + "|" + group + "/" + version
	ttl := r.TTL
	if ttl == 0 {
		ttl = time.Minute
	}
	r.mu.Lock()
	e, ok := r.entries[key]
	r.mu.Unlock()
	if !ok || time.Since(e.fetched) > ttl {
		list, err := r.discover(ctx, cluster, group, version)
		if err != nil {
			return fga.Resource{}, err
		}
		e = entry{list: list, fetched: time.Now()}
		r.mu.Lock()
		if r.entries == nil {
			r.entries = map[string]entry{}
		}
		r.entries[key] = e
		r.mu.Unlock()
	}
	res, ok := e.list[plural]
	if !ok {
		return fga.Resource{}, ErrUnknown
	}
	return res, nil
}

func (r *Resolver) discover(ctx context.Context, cluster, group, version string) (map[string]fga.Resource, error) {
	url := fmt.Sprintf("%s/clusters/%s/apis/%s/%s", strings.TrimSuffix(r.Host, "/"), cluster, group, version)
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := r.HTTP.Do(req)
	if err != nil {
		return nil, fmt.Errorf("discovery of %s/%s in %s: %w", group, version, cluster, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode == http.StatusNotFound {
		return map[string]fga.Resource{}, nil
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("discovery of %s/%s in %s: %d %s", group, version, cluster, resp.StatusCode, strings.TrimSpace(string(body)))
	}
	var list metav1.APIResourceList
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, fmt.Errorf("discovery of %s/%s in %s: %w", group, version, cluster, err)
	}
	out := map[string]fga.Resource{}
	for _, ar := range list.APIResources {
		if strings.Contains(ar.Name, "/") {
			continue
		}
		singular := ar.SingularName
		if singular == "" {
			singular = strings.ToLower(ar.Kind)
		}
		out[ar.Name] = fga.Resource{Group: group, Plural: ar.Name, Singular: singular, Namespaced: ar.Namespaced}
	}
	return out, nil
}
