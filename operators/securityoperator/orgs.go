package securityoperator

import (
	"context"
	"fmt"
	"strings"
	"sync"

	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// workspaceCluster returns a function that finds the logical cluster of a
// workspace path from the workspace tree: spec.cluster of its Workspace in
// its parent (read with cfg, the lifecycle credential), never from a
// LogicalCluster's path annotation. The answer is kept once found: a
// workspace never moves to another logical cluster.
func workspaceCluster(cfg *rest.Config, path string, newClient func(*rest.Config) (client.Client, error)) func(context.Context) (string, error) {
	var mu sync.Mutex
	var found string
	return func(ctx context.Context) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		if found != "" {
			return found, nil
		}
		i := strings.LastIndex(path, ":")
		parent, name := path[:i], path[i+1:]
		c := rest.CopyConfig(cfg)
		c.Host = strings.TrimSuffix(cfg.Host, "/") + "/clusters/" + parent
		cl, err := newClient(c)
		if err != nil {
			return "", err
		}
		ws := &tenancyv1alpha1.Workspace{}
		ctx, cancel := context.WithTimeout(ctx, callTimeout)
		defer cancel()
		if err := cl.Get(ctx, client.ObjectKey{Name: name}, ws); err != nil {
			return "", fmt.Errorf("reading Workspace %s in %s: %w", name, parent, err)
		}
		if ws.Spec.Cluster == "" {
			return "", fmt.Errorf("workspace %s has no logical cluster yet", path)
		}
		found = ws.Spec.Cluster
		return found, nil
	}
}
