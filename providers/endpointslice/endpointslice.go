// Package endpointslice finds the virtual workspace URL of an APIExport
// through its APIExportEndpointSlice, and points rest.Configs at it.
//
// A provider is given a kubeconfig for its own workspace (the one holding
// the APIExport and its endpoint slice). The slice's status.endpoints[].url
// is where the export's virtual workspace is served; a controller talks to
// every consumer through <url>/clusters/<consumer|*>.
package endpointslice

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	apisv1alpha1 "github.com/kcp-dev/sdk/apis/apis/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ErrNoURL says the slice exists but lists no endpoint yet (no workspace
// binds the export, or the core has not filled it in).
var ErrNoURL = errors.New("the endpoint slice has no URL yet")

// URLs returns the endpoint URLs of a slice, in order.
func URLs(slice *apisv1alpha1.APIExportEndpointSlice) []string {
	var urls []string
	for _, e := range slice.Status.APIExportEndpoints {
		if e.URL != "" {
			urls = append(urls, e.URL)
		}
	}
	return urls
}

// Get reads the slice name from the workspace cfg points at and returns its
// first URL, ErrNoURL when it has none.
func Get(ctx context.Context, cfg *rest.Config, name string) (string, error) {
	scheme := runtime.NewScheme()
	if err := apisv1alpha1.AddToScheme(scheme); err != nil {
		return "", err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return "", err
	}
	slice := &apisv1alpha1.APIExportEndpointSlice{}
	if err := c.Get(ctx, client.ObjectKey{Name: name}, slice); err != nil {
		return "", fmt.Errorf("APIExportEndpointSlice %s at %s: %w", name, cfg.Host, err)
	}
	urls := URLs(slice)
	if len(urls) == 0 {
		return "", fmt.Errorf("APIExportEndpointSlice %s at %s: %w", name, cfg.Host, ErrNoURL)
	}
	return urls[0], nil
}

// WaitForURL polls the slice until it has a URL, ctx ends, or an error
// other than "not found yet" / "no URL yet" / a transient server error
// occurs (a Forbidden, say, is returned at once: waiting will not fix it).
func WaitForURL(ctx context.Context, cfg *rest.Config, name string, interval time.Duration) (string, error) {
	if interval <= 0 {
		interval = 500 * time.Millisecond
	}
	var last error
	for {
		url, err := Get(ctx, cfg, name)
		if err == nil {
			return url, nil
		}
		if !retriable(err) {
			return "", err
		}
		last = err
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("waiting for a URL in APIExportEndpointSlice %s: %w (last: %v)", name, ctx.Err(), last)
		case <-time.After(interval):
		}
	}
}

func retriable(err error) bool {
	return errors.Is(err, ErrNoURL) || apierrors.IsNotFound(err) || apierrors.IsServiceUnavailable(err) ||
		apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err) || apierrors.IsTooManyRequests(err) ||
		apierrors.IsInternalError(err) || isConnectionError(err)
}

func isConnectionError(err error) bool {
	s := err.Error()
	return strings.Contains(s, "connection refused") || strings.Contains(s, "connection reset") || strings.Contains(s, "EOF")
}

// ConfigFor returns a copy of cfg whose host is url (the virtual workspace
// of the export); credentials and TLS settings are kept.
func ConfigFor(cfg *rest.Config, url string) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.Host = strings.TrimSuffix(url, "/")
	c.APIPath = ""
	return c
}

// BaseHost strips a /clusters/<...> or /services/<...> path from a host
// URL, giving the core's base URL.
func BaseHost(host string) string {
	for _, sep := range []string{"/clusters/", "/services/"} {
		if i := strings.Index(host, sep); i >= 0 {
			return host[:i]
		}
	}
	return strings.TrimSuffix(host, "/")
}
