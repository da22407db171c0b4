package workspace

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/pflag"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
)

// createOptions implements "kubectl ws create".
type createOptions struct {
	*options

	wsType           string
	enterAfter       bool
	ignoreExisting   bool
	readyTimeout     time.Duration
	locationSelector string
	contextName      string
}

func (o *createOptions) bindFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.wsType, "type", o.wsType, "A workspace type, e.g. universal or root:universal. The default type depends on where this child workspace is created.")
	fs.BoolVar(&o.enterAfter, "enter", o.enterAfter, "Immediately enter the created workspace")
	fs.BoolVar(&o.ignoreExisting, "ignore-existing", o.ignoreExisting, "Ignore if the workspace already exists (its type must match --type if given)")
	fs.DurationVar(&o.readyTimeout, "ready-wait-timeout", o.readyTimeout, "How long to wait for the workspace to become ready; 0 does not wait and fails if it is not ready")
	fs.StringVar(&o.locationSelector, "location-selector", o.locationSelector, "A label selector to select the scheduling location of the created workspace")
	fs.StringVar(&o.contextName, "create-context", o.contextName, "Create a kubeconfig context with the given name for the new workspace (entered too with --enter)")
}

func (o *createOptions) run(ctx context.Context, name string) error {
	_, current, c, err := o.currentWorkspace()
	if err != nil {
		return err
	}

	requested := parseTypeRef(o.wsType)
	ws := &tenancyv1alpha1.Workspace{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       tenancyv1alpha1.WorkspaceSpec{Type: requested},
	}
	if o.locationSelector != "" {
		sel, err := metav1.ParseToLabelSelector(o.locationSelector)
		if err != nil {
			return fmt.Errorf("invalid location selector: %w", err)
		}
		ws.Spec.Location = &tenancyv1alpha1.WorkspaceLocation{Selector: sel}
	}

	preExisting := false
	got, err := c.createWorkspace(ctx, current, ws)
	if apierrors.IsAlreadyExists(err) && o.ignoreExisting {
		preExisting = true
		got, err = c.getWorkspace(ctx, current, name)
	}
	if err != nil {
		return err
	}

	wsType := got.Spec.Type
	if wsType == nil {
		wsType = requested
	}
	ref := fmt.Sprintf("Workspace %q", name)
	if t := typeString(wsType); t != "" {
		ref += fmt.Sprintf(" (type %s)", t)
	}

	ready := got.Status.Phase == corev1alpha1.LogicalClusterPhaseReady
	switch {
	case preExisting && requested != nil && got.Spec.Type != nil && !sameType(requested, got.Spec.Type):
		return fmt.Errorf("workspace %q cannot be created with type %s, it already exists with different type %s", name, typeString(requested), typeString(got.Spec.Type))
	case preExisting && !ready && o.readyTimeout > 0:
		fmt.Fprintf(o.out, "%s already exists. Waiting for it to be ready...\n", ref)
	case preExisting:
		fmt.Fprintf(o.out, "%s already exists.\n", ref)
	case !ready && o.readyTimeout > 0:
		fmt.Fprintf(o.out, "%s created. Waiting for it to be ready...\n", ref)
	}
	if !ready {
		if o.readyTimeout <= 0 {
			return fmt.Errorf("%s created but is not ready to use", ref)
		}
		if got, err = o.waitReady(ctx, c, current, name); err != nil {
			return fmt.Errorf("%s: %w", ref, err)
		}
	}
	fmt.Fprintf(o.out, "%s is ready to use.\n", ref)

	target := joinPath(current, name)
	server := clusterURL(c.base, target)
	switch {
	case o.contextName != "":
		return createContextFor(o.options, o.contextName, server, o.ignoreExisting, !o.enterAfter)
	case o.enterAfter:
		if _, err := checkWorkspace(ctx, c, target); err != nil {
			return err
		}
		return o.enter(server, wsType, false)
	}
	return nil
}

// waitReady polls the workspace until its phase is Ready. A 404 is tolerated:
// a freshly created workspace may take a moment to become visible.
func (o *createOptions) waitReady(ctx context.Context, c *client, parent, name string) (*tenancyv1alpha1.Workspace, error) {
	var waited time.Duration
	var phase corev1alpha1.LogicalClusterPhaseType
	for {
		ws, err := c.getWorkspace(ctx, parent, name)
		switch {
		case err == nil:
			phase = ws.Status.Phase
			switch phase {
			case corev1alpha1.LogicalClusterPhaseReady:
				return ws, nil
			case corev1alpha1.LogicalClusterPhaseTerminating, corev1alpha1.LogicalClusterPhaseDeleting:
				return nil, fmt.Errorf("workspace is being deleted (phase %s)", phase)
			}
		case apierrors.IsNotFound(err):
		default:
			return nil, err
		}
		if waited >= o.readyTimeout {
			if phase == "" {
				return nil, fmt.Errorf("not ready after %s", o.readyTimeout)
			}
			return nil, fmt.Errorf("not ready after %s (phase %s)", o.readyTimeout, phase)
		}
		if err := o.sleep(ctx, o.pollInterval); err != nil {
			return nil, err
		}
		waited += o.pollInterval
	}
}

// sameType compares a requested type with the type of an existing workspace;
// a requested type without path matches any path.
func sameType(requested, existing *tenancyv1alpha1.WorkspaceTypeReference) bool {
	if requested.Name != existing.Name {
		return false
	}
	return requested.Path == "" || requested.Path == existing.Path
}
