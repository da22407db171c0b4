// Package orgs reads what the webhook needs to know of root:orgs, the
// workspace holding every organization's Account and Workspace: its
// logical cluster, and an organization Account's founder. Tenants may not
// list root:orgs (they would learn every organization's name, creator and
// cluster); the webhook lets an organization's founder and members read
// their own organization's Account and Workspace by name.
package orgs

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"

	authorizationv1 "k8s.io/api/authorization/v1"

	corev1alpha1 "github.com/meshplane/meshplane/apis/core/v1alpha1"
)

// Path is the workspace of the organizations.
const Path = "root:orgs"

// Reader reads root:orgs with the webhook's own credential.
type Reader struct {
	// Host is the core's base URL; HTTP its client (the webhook's
	// credential, which may read root:orgs).
	Host string
	HTTP *http.Client

	mu      sync.Mutex
	cluster string // root:orgs' logical cluster, once known
}

// Request returns the organization a review in root:orgs is about and
// the relation on its Account that decides it: get for a read by name (get,
// or a list or watch of one name, kubectl's field selector metadata.name)
// of the Account or of its Workspace, which has the Account's name; delete
// for deleting the Account. ok is false for anything else.
func Request(ra *authorizationv1.ResourceAttributes) (name, relation string, ok bool) {
	if ra == nil || ra.Name == "" || ra.Subresource != "" {
		return "", "", false
	}
	accounts := ra.Group == corev1alpha1.SchemeGroupVersion.Group && ra.Resource == "accounts"
	workspaces := ra.Group == "tenancy.kcp.io" && ra.Resource == "workspaces"
	switch {
	case (accounts || workspaces) && (ra.Verb == "get" || ra.Verb == "list" || ra.Verb == "watch"):
		return ra.Name, "get", true
	case accounts && ra.Verb == "delete":
		return ra.Name, "delete", true
	}
	return "", "", false
}

// Cluster returns root:orgs' logical cluster, read once.
func (r *Reader) Cluster(ctx context.Context) (string, error) {
	r.mu.Lock()
	known := r.cluster
	r.mu.Unlock()
	if known != "" {
		return known, nil
	}
	var lc struct {
		Metadata struct {
			Annotations map[string]string `json:"annotations"`
		} `json:"metadata"`
	}
	if err := r.get(ctx, "/clusters/"+Path+"/apis/core.kcp.io/v1alpha1/logicalclusters/cluster", &lc); err != nil {
		return "", err
	}
	cluster := lc.Metadata.Annotations["kcp.io/cluster"]
	if cluster == "" {
		return "", fmt.Errorf("the LogicalCluster of %s names no cluster", Path)
	}
	r.mu.Lock()
	r.cluster = cluster
	r.mu.Unlock()
	return cluster, nil
}

// Founder returns the creator of the organization Account name in
// root:orgs (cluster); found is false when there is no such organization.
func (r *Reader) Founder(ctx context.Context, cluster, name string) (creator string, found bool, err error) {
	a := &corev1alpha1.Account{}
	err = r.get(ctx, "/clusters/"+cluster+"/apis/"+corev1alpha1.SchemeGroupVersion.String()+"/accounts/"+url.PathEscape(name), a)
	if err == errNotFound {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	if a.Spec.Type != corev1alpha1.AccountTypeOrg || a.Spec.Creator == nil {
		return "", true, nil
	}
	return *a.Spec.Creator, true, nil
}

var errNotFound = fmt.Errorf("not found")

func (r *Reader) get(ctx context.Context, path string, into any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(r.Host, "/")+path, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := r.HTTP.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return err
	}
	switch resp.StatusCode {
	case http.StatusOK:
		return json.Unmarshal(body, into)
	case http.StatusNotFound:
		return errNotFound
	}
	return fmt.Errorf("GET %s: %d %s", path, resp.StatusCode, strings.TrimSpace(string(body)))
}
