package workspace

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
)

// useOptions implements "kubectl ws [use] <name>".
type useOptions struct {
	*options
	short bool
}

func (o *useOptions) run(ctx context.Context, name string) error {
	homeDir, _ := o.userHomeDir()
	name, _ = normalizeName(name, homeDir)

	switch {
	case name == ".":
		return o.printCurrent(o.short)
	case name == "-":
		return o.swap()
	}

	_, current, c, err := o.currentWorkspace()
	if err != nil {
		return err
	}

	var homeType *tenancyv1alpha1.WorkspaceTypeReference
	switch {
	case name == "" || name == "~" || strings.HasPrefix(name, "~:"):
		home, ws, err := o.homePath(ctx, c)
		if err != nil {
			return err
		}
		sub := strings.TrimPrefix(strings.TrimPrefix(name, "~"), ":")
		if sub == "" {
			homeType = ws.Spec.Type
		}
		name = ":" + joinPath(home, sub)
	case name == ":":
		name = ":" + rootOf(current)
	}

	target, err := resolveTarget(current, name)
	if err != nil {
		return err
	}
	wsType, err := checkWorkspace(ctx, c, target)
	if err != nil {
		return err
	}
	if wsType == nil {
		// homes need not have a readable parent; their type is known anyway
		wsType = homeType
	}
	return o.enter(clusterURL(c.base, target), wsType, o.short)
}

// enter points the current workspace context at server and reports it.
func (o *options) enter(server string, wsType *tenancyv1alpha1.WorkspaceTypeReference, short bool) error {
	st, err := o.kubeconfigState()
	if err != nil {
		return err
	}
	cfg, err := switchWorkspace(st, server)
	if err != nil {
		return err
	}
	if err := o.writeKubeconfig(cfg); err != nil {
		return err
	}
	return printCurrentWorkspace(o.out, server, short, wsType)
}

// swap implements "kubectl ws -".
func (o *useOptions) swap() error {
	st, err := o.kubeconfigState()
	if err != nil {
		return err
	}
	cfg, server, err := swapWorkspaces(st)
	if err != nil {
		return err
	}
	if err := o.writeKubeconfig(cfg); err != nil {
		return err
	}
	return printCurrentWorkspace(o.out, server, o.short, nil)
}

// printCurrent implements "kubectl ws ." and "kubectl ws current".
func (o *options) printCurrent(short bool) error {
	cfg, err := o.restConfig()
	if err != nil {
		return err
	}
	return printCurrentWorkspace(o.out, cfg.Host, short, nil)
}

func printCurrentWorkspace(out io.Writer, server string, short bool, wsType *tenancyv1alpha1.WorkspaceTypeReference) error {
	_, p, err := parseClusterURL(server)
	if err != nil {
		if short {
			return nil
		}
		_, err = fmt.Fprintf(out, "Current workspace is the URL %q.\n", server)
		return err
	}
	if short {
		_, err = fmt.Fprintln(out, p)
		return err
	}
	msg := fmt.Sprintf("Current workspace is %q", p)
	if t := typeString(wsType); t != "" {
		msg += fmt.Sprintf(" (type %s)", t)
	}
	_, err = fmt.Fprintln(out, msg+".")
	return err
}

// homePath asks the server for the caller's home workspace. While the home
// workspace is being created the server answers 429 (Too Many Requests) with
// Retry-After; this is retried until homeTimeout worth of waiting is spent.
func (o *options) homePath(ctx context.Context, c *client) (string, *tenancyv1alpha1.Workspace, error) {
	var waited time.Duration
	for {
		ws, err := c.getHomeOnce(ctx)
		if err == nil {
			_, p, perr := parseClusterURL(ws.Spec.URL)
			if perr != nil {
				return "", nil, fmt.Errorf("invalid home workspace URL %q: %w", ws.Spec.URL, perr)
			}
			return p, ws, nil
		}
		if !apierrors.IsTooManyRequests(err) {
			return "", nil, fmt.Errorf("failed to get the home workspace: %w", err)
		}
		if waited >= o.homeTimeout {
			return "", nil, fmt.Errorf("home workspace is still not ready after %s: %w", o.homeTimeout, err)
		}
		delay := time.Second
		if s, ok := apierrors.SuggestsClientDelay(err); ok && s > 0 {
			delay = time.Duration(s) * time.Second
		}
		if rest := o.homeTimeout - waited; delay > rest {
			delay = rest
		}
		if err := o.sleep(ctx, delay); err != nil {
			return "", nil, err
		}
		waited += delay
	}
}

// checkWorkspace verifies that the workspace at path p exists, is accessible
// and ready, and returns its type when known.
//
// The Workspace object in the parent gives type and phase (a 404 there means
// the workspace does not exist; lack of access to the parent is no obstacle).
// The LogicalCluster of the workspace itself decides existence and access.
func checkWorkspace(ctx context.Context, c *client, p string) (*tenancyv1alpha1.WorkspaceTypeReference, error) {
	var ws *tenancyv1alpha1.Workspace
	var wsType *tenancyv1alpha1.WorkspaceTypeReference
	wsNotFound := false
	if p == rootPath {
		wsType = &tenancyv1alpha1.WorkspaceTypeReference{Name: "root"}
	} else if parent, ok := parentPath(p); ok {
		w, err := c.getWorkspace(ctx, parent, baseName(p))
		switch {
		case err == nil:
			ws = w
			wsType = w.Spec.Type
		case apierrors.IsNotFound(err):
			wsNotFound = true
		}
	}
	if ws != nil && ws.Status.Phase != "" && ws.Status.Phase != corev1alpha1.LogicalClusterPhaseReady {
		return nil, fmt.Errorf("workspace %q is not ready yet (phase %s)", p, ws.Status.Phase)
	}

	lc, err := c.getLogicalCluster(ctx, p)
	switch {
	case err == nil:
	case apierrors.IsNotFound(err):
		return nil, fmt.Errorf("workspace %q not found", p)
	case apierrors.IsForbidden(err):
		if wsNotFound {
			return nil, fmt.Errorf("workspace %q not found", p)
		}
		return nil, fmt.Errorf("access to workspace %q denied", p)
	default:
		return nil, err
	}
	if ws == nil && lc.Status.Phase != "" && lc.Status.Phase != corev1alpha1.LogicalClusterPhaseReady {
		return nil, fmt.Errorf("workspace %q is not ready yet (phase %s)", p, lc.Status.Phase)
	}
	return wsType, nil
}
