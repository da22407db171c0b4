package kube

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"sync"

	"github.com/meshplane/meshplane/gateway/internal/schema"
)

// APISet identifies the OpenAPI documents a workspace serves.
type APISet struct {
	// Hash is the same for two workspaces with the same documents.
	Hash string
	// Paths maps "api/v1", "apis/g/v" to the document's path and query.
	Paths map[string]string
}

// FetchAPISet reads a workspace's OpenAPI v3 index (as the admin) and
// hashes the per-document hashes the core puts into its URLs.
func (c *Client) FetchAPISet(ctx context.Context, ws string) (*APISet, error) {
	b, err := c.Do(ctx, "", Request{Method: "GET", Path: ClusterPath(ws) + "/openapi/v3"})
	if err != nil {
		return nil, err
	}
	var idx struct {
		Paths map[string]struct {
			URL string `json:"serverRelativeURL"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(b, &idx); err != nil {
		return nil, fmt.Errorf("decoding the OpenAPI v3 index of %s: %w", ws, err)
	}
	set := &APISet{Paths: map[string]string{}}
	keys := make([]string, 0, len(idx.Paths))
	for k, v := range idx.Paths {
		keys = append(keys, k)
		set.Paths[k] = v.URL
	}
	sort.Strings(keys)
	h := sha256.New()
	for _, k := range keys {
		u, _ := url.Parse(idx.Paths[k].URL)
		hash := ""
		if u != nil {
			hash = u.Query().Get("hash")
		}
		if hash == "" {
			hash = idx.Paths[k].URL
		}
		fmt.Fprintf(h, "%s=%s\n", k, hash)
	}
	set.Hash = hex.EncodeToString(h.Sum(nil))[:16]
	return set, nil
}

type resourceList struct {
	GroupVersion string `json:"groupVersion"`
	Resources    []struct {
		Name       string   `json:"name"`
		Kind       string   `json:"kind"`
		Namespaced bool     `json:"namespaced"`
		Verbs      []string `json:"verbs"`
	} `json:"resources"`
}

// FetchInput reads discovery and the OpenAPI documents of every
// group-version with resources (as the admin).
func (c *Client) FetchInput(ctx context.Context, ws string, set *APISet) (*schema.Input, error) {
	gvs := []string{}
	b, err := c.Do(ctx, "", Request{Method: "GET", Path: ClusterPath(ws) + "/api"})
	if err != nil {
		return nil, fmt.Errorf("discovery of %s: %w", ws, err)
	}
	var core struct {
		Versions []string `json:"versions"`
	}
	if err := json.Unmarshal(b, &core); err != nil {
		return nil, err
	}
	gvs = append(gvs, core.Versions...)
	b, err = c.Do(ctx, "", Request{Method: "GET", Path: ClusterPath(ws) + "/apis"})
	if err != nil {
		return nil, fmt.Errorf("discovery of %s: %w", ws, err)
	}
	var groups struct {
		Groups []struct {
			Versions []struct {
				GroupVersion string `json:"groupVersion"`
			} `json:"versions"`
		} `json:"groups"`
	}
	if err := json.Unmarshal(b, &groups); err != nil {
		return nil, err
	}
	for _, g := range groups.Groups {
		for _, v := range g.Versions {
			gvs = append(gvs, v.GroupVersion)
		}
	}

	in := &schema.Input{Docs: map[string]*schema.Document{}}
	var mu sync.Mutex
	var wg sync.WaitGroup
	var firstErr error
	sem := make(chan struct{}, 8)
	for _, gv := range gvs {
		wg.Add(1)
		go func(gv string) {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			prefix, group, version := "/apis/", "", gv
			if i := strings.Index(gv, "/"); i >= 0 {
				group, version = gv[:i], gv[i+1:]
			} else {
				prefix = "/api/"
			}
			b, err := c.Do(ctx, "", Request{Method: "GET", Path: ClusterPath(ws) + prefix + gv})
			if err != nil {
				if IsNotFound(err) {
					return
				}
				mu.Lock()
				firstErr = fmt.Errorf("discovery of %s in %s: %w", gv, ws, err)
				mu.Unlock()
				return
			}
			var rl resourceList
			if err := json.Unmarshal(b, &rl); err != nil {
				return
			}
			var rs []*schema.Resource
			for _, r := range rl.Resources {
				rs = append(rs, &schema.Resource{Group: group, Version: version, Resource: r.Name, Kind: r.Kind, Namespaced: r.Namespaced, Verbs: r.Verbs})
			}
			if len(rs) == 0 {
				return
			}
			docURL, ok := set.Paths[strings.TrimPrefix(prefix, "/")+gv]
			if !ok {
				return
			}
			u, err := url.Parse(docURL)
			if err != nil {
				return
			}
			db, err := c.Do(ctx, "", Request{Method: "GET", Path: u.Path, Query: u.Query()})
			if err != nil {
				mu.Lock()
				firstErr = fmt.Errorf("OpenAPI of %s in %s: %w", gv, ws, err)
				mu.Unlock()
				return
			}
			doc, err := schema.ParseDocument(db)
			if err != nil {
				mu.Lock()
				firstErr = fmt.Errorf("decoding the OpenAPI of %s in %s: %w", gv, ws, err)
				mu.Unlock()
				return
			}
			mu.Lock()
			in.Resources = append(in.Resources, rs...)
			in.Docs[gv] = doc
			mu.Unlock()
		}(gv)
	}
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	return in, nil
}
