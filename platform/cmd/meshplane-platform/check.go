package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/meshplane/meshplane/platform/bootstrap"
)

// checkCmd is the Helm chart's `helm test`: with kcp-admin's kubeconfig it
// checks that an installed platform works: the core is ready, the
// bootstrap's workspaces are Ready, the core.platform-mesh.io endpoint
// slice has a URL (the operators' and the webhook's way in), and the
// GraphQL gateway answers. Exit 0 when all hold, 1 when not, 2 on bad
// arguments.
func checkCmd(args []string) int {
	fs := flag.NewFlagSet("meshplane-platform check", flag.ContinueOnError)
	kubeconfig := fs.String("kubeconfig", "", "kcp-admin's kubeconfig, context base (required).")
	graphqlURL := fs.String("graphql-url", "", "Base URL of the GraphQL gateway (empty: not checked).")
	timeout := fs.Duration("timeout", 2*time.Minute, "How long the platform may take to pass.")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if *kubeconfig == "" || fs.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "meshplane-platform check: --kubeconfig is required")
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(&clientcmd.ClientConfigLoadingRules{ExplicitPath: *kubeconfig},
		&clientcmd.ConfigOverrides{CurrentContext: "base"}).ClientConfig()
	if err != nil {
		fmt.Fprintln(os.Stderr, "meshplane-platform check:", err)
		return 2
	}
	if err := checkPlatform(ctx, cfg, *graphqlURL, func(format string, args ...any) { fmt.Printf(format+"\n", args...) }); err != nil {
		fmt.Fprintln(os.Stderr, "meshplane-platform check:", err)
		return 1
	}
	return 0
}

// checkPlatform runs the checks in order, each until it passes or ctx ends.
func checkPlatform(ctx context.Context, base *rest.Config, graphqlURL string, say func(string, ...any)) error {
	checks := []struct {
		name string
		run  func(context.Context) error
	}{
		{"core /readyz", func(ctx context.Context) error { return coreReadyz(ctx, base) }},
		{"workspace root:platform-mesh-system Ready", func(ctx context.Context) error {
			return bootstrap.WaitWorkspaceReady(ctx, base, "root", "platform-mesh-system")
		}},
		{"workspace root:orgs Ready", func(ctx context.Context) error { return bootstrap.WaitWorkspaceReady(ctx, base, "root", "orgs") }},
		{"endpoint slice core.platform-mesh.io has a URL", func(ctx context.Context) error { return sliceURL(ctx, base) }},
	}
	if graphqlURL != "" {
		checks = append(checks, struct {
			name string
			run  func(context.Context) error
		}{"GraphQL gateway /readyz", func(ctx context.Context) error {
			return httpOK(ctx, http.DefaultClient, strings.TrimSuffix(graphqlURL, "/")+"/readyz")
		}})
	}
	for _, c := range checks {
		var err error
		for {
			if err = c.run(ctx); err == nil || ctx.Err() != nil {
				break
			}
			select {
			case <-ctx.Done():
			case <-time.After(2 * time.Second):
			}
		}
		if err != nil {
			return fmt.Errorf("%s: %w", c.name, err)
		}
		say("ok: %s", c.name)
	}
	return nil
}

func coreReadyz(ctx context.Context, base *rest.Config) error {
	hc, err := rest.HTTPClientFor(base)
	if err != nil {
		return err
	}
	return httpOK(ctx, hc, strings.TrimSuffix(base.Host, "/")+"/readyz")
}

func httpOK(ctx context.Context, hc *http.Client, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %d %s", url, resp.StatusCode, strings.TrimSpace(string(body)))
	}
	return nil
}

func sliceURL(ctx context.Context, base *rest.Config) error {
	cfg := rest.CopyConfig(base)
	cfg.Host = strings.TrimSuffix(base.Host, "/") + "/clusters/root:platform-mesh-system"
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	gvr := schema.GroupVersionResource{Group: "apis.kcp.io", Version: "v1alpha1", Resource: "apiexportendpointslices"}
	s, err := dyn.Resource(gvr).Get(ctx, "core.platform-mesh.io", metav1.GetOptions{})
	if err != nil {
		return err
	}
	endpoints, _, _ := unstructured.NestedSlice(s.Object, "status", "endpoints")
	for _, e := range endpoints {
		if m, ok := e.(map[string]any); ok && m["url"] != nil && m["url"] != "" {
			return nil
		}
	}
	return errors.New("no endpoint URL yet")
}
