// Package manager starts a multicluster-runtime manager for a provider:
// from a rest.Config for the provider's workspace and the name of its
// APIExportEndpointSlice it waits for the slice's URL and builds the
// manager on the path-aware apiexport provider, so controllers see every
// workspace that binds the export, each by name or by path.
package manager

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	ctrlmanager "sigs.k8s.io/controller-runtime/pkg/manager"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"

	"github.com/meshplane/meshplane/providers/endpointslice"
	"github.com/meshplane/meshplane/providers/pathaware"
)

// Options say which slice to follow and how to run the manager.
type Options struct {
	// EndpointSlice is the APIExportEndpointSlice's name in the provider
	// workspace (usually the export's name).
	EndpointSlice string
	// Scheme knows every type the controllers use (and apis.kcp.io
	// v1alpha1 for the provider's own watches).
	Scheme *runtime.Scheme
	// Manager are controller-runtime's manager options (metrics and health
	// addresses, leader election...). Its Scheme and Logger are set here.
	Manager ctrlmanager.Options
	// Log is the logger; default: discard.
	Log logr.Logger
	// WaitForURL bounds the wait for the slice's URL; 0 waits until ctx ends.
	WaitForURL time.Duration
	// Resolve overrides how a cluster's workspace path is looked up; the
	// default reads the LogicalCluster "cluster" through the virtual
	// workspace, then directly from the core with the same credentials.
	Resolve pathaware.ResolveFunc
}

// Kit is a ready-to-start manager with its provider.
type Kit struct {
	Manager  mcmanager.Manager
	Provider *pathaware.Provider
	// URL is the export's virtual workspace URL the slice gave.
	URL string
	// VirtualWorkspace is cfg pointed at URL.
	VirtualWorkspace *rest.Config

	log logr.Logger
}

// New waits for the slice's URL, then builds the provider and manager. cfg
// points at the provider workspace (…/clusters/root:my-provider).
func New(ctx context.Context, cfg *rest.Config, opts Options) (*Kit, error) {
	if opts.EndpointSlice == "" {
		return nil, errors.New("manager: EndpointSlice is required")
	}
	if opts.Scheme == nil {
		return nil, errors.New("manager: Scheme is required")
	}
	waitCtx := ctx
	if opts.WaitForURL > 0 {
		var cancel context.CancelFunc
		waitCtx, cancel = context.WithTimeout(ctx, opts.WaitForURL)
		defer cancel()
	}
	opts.Log.Info("waiting for the endpoint slice's URL", "slice", opts.EndpointSlice, "host", cfg.Host)
	url, err := endpointslice.WaitForURL(waitCtx, cfg, opts.EndpointSlice, time.Second)
	if err != nil {
		return nil, err
	}
	vw := endpointslice.ConfigFor(cfg, url)
	opts.Log.Info("endpoint slice URL", "slice", opts.EndpointSlice, "url", url)

	resolve := opts.Resolve
	if resolve == nil {
		direct := rest.CopyConfig(cfg)
		direct.Host = endpointslice.BaseHost(cfg.Host)
		resolve = LogicalClusterPath(vw, direct)
	}
	log := opts.Log.WithName("provider")
	p, err := pathaware.New(cfg, opts.EndpointSlice, pathaware.Options{Scheme: opts.Scheme, Log: &log, Resolve: resolve})
	if err != nil {
		return nil, fmt.Errorf("apiexport provider: %w", err)
	}
	mo := opts.Manager
	mo.Scheme = opts.Scheme
	mo.Logger = opts.Log
	mgr, err := mcmanager.New(cfg, p, mo)
	if err != nil {
		return nil, fmt.Errorf("multicluster manager: %w", err)
	}
	return &Kit{Manager: mgr, Provider: p, URL: url, VirtualWorkspace: vw, log: opts.Log}, nil
}

// LogicalClusterPath reads the kcp.io/path annotation of the LogicalCluster
// "cluster" of a logical cluster, asking each config's host in turn
// (<host>/clusters/<cluster>/apis/core.kcp.io/v1alpha1/logicalclusters/cluster)
// and returning the first answer.
//
// A host that refused the credential (401: a ServiceAccount token is valid
// only in its own workspace) is not asked again for refusedFor: the core
// answers an unauthenticated HTTP/2 request by closing the connection
// (kube-apiserver's mitigation of CVE-2023-44487), and every other request
// in flight on it is sent again over a new TLS connection.
func LogicalClusterPath(configs ...*rest.Config) pathaware.ResolveFunc {
	targets := make([]*pathTarget, len(configs))
	for i, c := range configs {
		hc, err := rest.HTTPClientFor(c)
		targets[i] = &pathTarget{host: strings.TrimSuffix(c.Host, "/"), hc: hc, err: err}
	}
	return func(ctx context.Context, cluster string) (string, error) {
		var errs []error
		for _, t := range targets {
			if t.err != nil {
				errs = append(errs, t.err)
				continue
			}
			if err := t.refused(); err != nil {
				errs = append(errs, err)
				continue
			}
			path, err := getPath(ctx, t.hc, t.host+"/clusters/"+cluster+"/apis/core.kcp.io/v1alpha1/logicalclusters/cluster")
			if err == nil {
				return path, nil
			}
			t.noteRefusal(err)
			errs = append(errs, err)
		}
		return "", errors.Join(errs...)
	}
}

// refusedFor is how long a host that refused the credential is not asked.
const refusedFor = 10 * time.Minute

// pathTarget is one host LogicalClusterPath asks.
type pathTarget struct {
	host string
	hc   *http.Client
	err  error

	mu      sync.Mutex
	until   time.Time // not asked before, after a 401
	refusal error
}

// refused returns the 401 of the host while it is not asked.
func (t *pathTarget) refused() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if time.Now().Before(t.until) {
		return t.refusal
	}
	return nil
}

// noteRefusal remembers a 401.
func (t *pathTarget) noteRefusal(err error) {
	var np *pathaware.NotPermittedError
	var st *statusError
	if !errors.As(err, &np) || !errors.As(err, &st) || st.code != http.StatusUnauthorized {
		return
	}
	t.mu.Lock()
	t.until, t.refusal = time.Now().Add(refusedFor), err
	t.mu.Unlock()
}

// statusError is a lookup answered with an HTTP error status.
type statusError struct {
	code int
	msg  string
}

func (e *statusError) Error() string { return e.msg }

func getPath(ctx context.Context, hc *http.Client, url string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		err := &statusError{code: resp.StatusCode, msg: fmt.Sprintf("GET %s: %d %s", url, resp.StatusCode, strings.TrimSpace(string(body)))}
		if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
			return "", &pathaware.NotPermittedError{Err: err}
		}
		return "", err
	}
	var lc struct {
		Metadata struct {
			Annotations map[string]string `json:"annotations"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(body, &lc); err != nil {
		return "", fmt.Errorf("GET %s: %w", url, err)
	}
	path := lc.Metadata.Annotations[pathaware.PathAnnotation]
	if path == "" {
		return "", fmt.Errorf("GET %s: no %s annotation", url, pathaware.PathAnnotation)
	}
	return path, nil
}
