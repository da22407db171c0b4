package workspace

import (
	"errors"
	"fmt"

	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// The plugin keeps its state in the kubeconfig, exactly like kcp's plugin: the
// workspace in use is the cluster + context "workspace.kcp.io/current", the one
// before it the cluster + context "workspace.kcp.io/previous".
const (
	currentContextKey  = "workspace.kcp.io/current"
	previousContextKey = "workspace.kcp.io/previous"
)

// kubeconfigState is the input of the kubeconfig edits: the raw kubeconfig as
// loaded from disk (without command line overrides) and the name of the
// context in use (the --context flag wins over current-context).
type kubeconfigState struct {
	config      *clientcmdapi.Config
	contextName string
}

func (s kubeconfigState) currentContext() (*clientcmdapi.Context, error) {
	if s.contextName == "" {
		return nil, errors.New("no current context in kubeconfig")
	}
	ctx, ok := s.config.Contexts[s.contextName]
	if !ok {
		return nil, fmt.Errorf("current %q context not found", s.contextName)
	}
	return ctx, nil
}

// switchWorkspace returns a copy of the kubeconfig whose current context points
// to server. The new cluster entry inherits CA, TLS and proxy settings from the
// cluster of the context in use; the new context inherits user, namespace and
// extensions. The context in use (and its cluster, when that is the current
// workspace cluster) is preserved as "workspace.kcp.io/previous".
func switchWorkspace(s kubeconfigState, server string) (*clientcmdapi.Config, error) {
	curCtx, err := s.currentContext()
	if err != nil {
		return nil, err
	}
	curCluster, ok := s.config.Clusters[curCtx.Cluster]
	if !ok {
		return nil, fmt.Errorf("cluster %q not found in kubeconfig", curCtx.Cluster)
	}

	out := s.config.DeepCopy()
	ensureMaps(out)

	newCluster := curCluster.DeepCopy()
	newCluster.Server = server
	newCtx := curCtx.DeepCopy()
	newCtx.Cluster = currentContextKey

	prevCtx := curCtx.DeepCopy()
	if curCtx.Cluster == currentContextKey {
		// the cluster entry is about to be overwritten: keep the old one
		out.Clusters[previousContextKey] = curCluster.DeepCopy()
		prevCtx.Cluster = previousContextKey
	}

	out.Clusters[currentContextKey] = newCluster
	out.Contexts[currentContextKey] = newCtx
	out.Contexts[previousContextKey] = prevCtx
	out.CurrentContext = currentContextKey
	return out, nil
}

// swapWorkspaces returns a copy of the kubeconfig where "workspace.kcp.io/current"
// and "workspace.kcp.io/previous" have changed places (kubectl ws -), together
// with the server of the new current context.
func swapWorkspaces(s kubeconfigState) (*clientcmdapi.Config, string, error) {
	curCtx, err := s.currentContext()
	if err != nil {
		return nil, "", err
	}
	prevCtx, ok := s.config.Contexts[previousContextKey]
	if !ok {
		return nil, "", errors.New("no previous workspace found in kubeconfig")
	}

	out := s.config.DeepCopy()
	ensureMaps(out)

	newPrev := curCtx.DeepCopy()
	if curCtx.Cluster == currentContextKey {
		c, ok := s.config.Clusters[currentContextKey]
		if !ok {
			return nil, "", fmt.Errorf("cluster %q not found in kubeconfig", currentContextKey)
		}
		out.Clusters[previousContextKey] = c.DeepCopy()
		newPrev.Cluster = previousContextKey
	}
	newCur := prevCtx.DeepCopy()
	if prevCtx.Cluster == previousContextKey {
		c, ok := s.config.Clusters[previousContextKey]
		if !ok {
			return nil, "", fmt.Errorf("cluster %q not found in kubeconfig", previousContextKey)
		}
		out.Clusters[currentContextKey] = c.DeepCopy()
		newCur.Cluster = currentContextKey
	}
	cluster, ok := out.Clusters[newCur.Cluster]
	if !ok {
		return nil, "", fmt.Errorf("cluster %q of the previous workspace not found in kubeconfig", newCur.Cluster)
	}

	out.Contexts[currentContextKey] = newCur
	out.Contexts[previousContextKey] = newPrev
	out.CurrentContext = currentContextKey
	return out, cluster.Server, nil
}

// createContext returns a copy of the kubeconfig with a context and cluster
// called name pointing to server (when empty: the server of the context in use),
// inheriting everything else from the context in use. With keepCurrent the
// current context stays as it is, otherwise the new context becomes current.
func createContext(s kubeconfigState, name, server string, overwrite, keepCurrent bool) (*clientcmdapi.Config, bool, error) {
	curCtx, err := s.currentContext()
	if err != nil {
		return nil, false, err
	}
	curCluster, ok := s.config.Clusters[curCtx.Cluster]
	if !ok {
		return nil, false, fmt.Errorf("cluster %q not found in kubeconfig", curCtx.Cluster)
	}
	_, existed := s.config.Contexts[name]
	if existed && !overwrite {
		return nil, false, fmt.Errorf("context %q already exists in kubeconfig, use --overwrite to update it", name)
	}

	out := s.config.DeepCopy()
	ensureMaps(out)
	newCluster := curCluster.DeepCopy()
	if server != "" {
		newCluster.Server = server
	}
	newCtx := curCtx.DeepCopy()
	newCtx.Cluster = name
	out.Clusters[name] = newCluster
	out.Contexts[name] = newCtx
	if keepCurrent {
		out.CurrentContext = s.contextName
	} else {
		out.CurrentContext = name
	}
	return out, existed, nil
}

func ensureMaps(c *clientcmdapi.Config) {
	if c.Clusters == nil {
		c.Clusters = map[string]*clientcmdapi.Cluster{}
	}
	if c.Contexts == nil {
		c.Contexts = map[string]*clientcmdapi.Context{}
	}
}
