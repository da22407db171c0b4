// Package workspace implements the "kubectl ws" plugin: navigating, listing
// and creating kcp-style workspaces by editing the kubeconfig, compatible with
// kcp's own plugin (same commands, same kubeconfig contexts, same messages).
package workspace

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

const example = `
  # show the workspace you are currently using
  kubectl ws .

  # enter a child workspace of the current workspace
  kubectl ws my-workspace
  kubectl ws use my-workspace

  # enter a nested relative workspace
  kubectl ws some:nested:workspace

  # enter an absolute workspace
  kubectl ws :root:org:my-workspace

  # enter the root of the current hierarchy
  kubectl ws :

  # enter the parent or the grand parent workspace
  kubectl ws ..
  kubectl ws ..:..

  # go back to the previous workspace
  kubectl ws -

  # go to your home workspace
  kubectl ws
  kubectl ws ~

  # show the tree of workspaces below the current one
  kubectl ws tree

  # create a workspace and enter it once it is ready
  kubectl ws create my-workspace --type root:universal --enter

  # create a kubeconfig context for the current workspace
  kubectl ws create-context
`

// options holds what every subcommand shares: kubeconfig flags, output
// streams and the knobs tests turn.
type options struct {
	kubeconfig string
	overrides  clientcmd.ConfigOverrides

	out    io.Writer
	errOut io.Writer

	// userHomeDir finds the home directory to undo the shell's "~" expansion.
	userHomeDir func() (string, error)
	// sleep waits between retries and polls; it returns early when ctx ends.
	sleep func(ctx context.Context, d time.Duration) error
	// homeTimeout bounds how long a home workspace still being created is waited for.
	homeTimeout time.Duration
	// pollInterval is the interval of readiness polls after create.
	pollInterval time.Duration

	// set up by complete
	clientConfig clientcmd.ClientConfig
}

func newOptions() *options {
	return &options{
		userHomeDir:  os.UserHomeDir,
		sleep:        sleepCtx,
		homeTimeout:  30 * time.Second,
		pollInterval: 500 * time.Millisecond,
	}
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// bindFlags adds --kubeconfig and kubectl's standard connection flags
// (--context, --cluster, --user, --server, --token, --insecure-skip-tls-verify,
// --certificate-authority, --namespace, --request-timeout, ...).
func (o *options) bindFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.kubeconfig, clientcmd.RecommendedConfigPathFlag, o.kubeconfig, "Path to the kubeconfig file to use for CLI requests.")
	clientcmd.BindOverrideFlags(&o.overrides, fs, clientcmd.RecommendedConfigOverrideFlags(""))
}

// complete sets up the kubeconfig loading once flags are parsed (KUBECONFIG is
// read here, so that it is honoured when --kubeconfig is not given).
func (o *options) complete(cmd *cobra.Command) {
	o.out = cmd.OutOrStdout()
	o.errOut = cmd.ErrOrStderr()
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = o.kubeconfig
	o.clientConfig = clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &o.overrides)
}

// kubeconfigState returns the kubeconfig as stored on disk and the name of the
// context in use.
func (o *options) kubeconfigState() (kubeconfigState, error) {
	cfg, err := o.clientConfig.ConfigAccess().GetStartingConfig()
	if err != nil {
		return kubeconfigState{}, err
	}
	name := cfg.CurrentContext
	if o.overrides.CurrentContext != "" {
		name = o.overrides.CurrentContext
	}
	return kubeconfigState{config: cfg, contextName: name}, nil
}

// writeKubeconfig persists cfg to the file(s) it was loaded from.
func (o *options) writeKubeconfig(cfg *clientcmdapi.Config) error {
	return clientcmd.ModifyConfig(o.clientConfig.ConfigAccess(), *cfg, true)
}

// restConfig returns the client configuration in effect (with overrides).
func (o *options) restConfig() (*rest.Config, error) {
	return o.clientConfig.ClientConfig()
}

// currentWorkspace returns the base URL and the workspace path of the server
// in effect.
func (o *options) currentWorkspace() (*rest.Config, string, *client, error) {
	cfg, err := o.restConfig()
	if err != nil {
		return nil, "", nil, err
	}
	base, current, err := parseClusterURL(cfg.Host)
	if err != nil {
		return nil, "", nil, fmt.Errorf("current URL %q does not point to a workspace", cfg.Host)
	}
	c, err := newClient(cfg, base)
	if err != nil {
		return nil, "", nil, err
	}
	return cfg, current, c, nil
}

// NewCommand returns the root command of the "kubectl ws" plugin.
func NewCommand() *cobra.Command {
	return newCommand(newOptions())
}

func newCommand(o *options) *cobra.Command {
	use := &useOptions{options: o}
	cmd := &cobra.Command{
		Use:   "kubectl-ws [create|create-context|use|current|tree|<workspace>|..|.|-|~|:<absolute:path>]",
		Short: "Manages kcp workspaces",
		Long: "Manages kcp workspaces: show, enter, list and create them. Entering a workspace\n" +
			"points the kubeconfig context \"" + currentContextKey + "\" at it.",
		Example:          example,
		Annotations:      map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl ws"},
		Args:             cobra.MaximumNArgs(1),
		SilenceUsage:     true,
		TraverseChildren: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.complete(cmd)
			name := ""
			if len(args) > 0 {
				name = args[0]
			}
			return use.run(cmd.Context(), name)
		},
	}
	o.bindFlags(cmd.PersistentFlags())
	cmd.Flags().BoolVar(&use.short, "short", false, "Print only the path of the workspace, e.g. for integration into the shell prompt")

	useCmd := &cobra.Command{
		Use:     "use <workspace>|..|.|-|~|:<absolute:path>|<relative:path>",
		Aliases: []string{"cd"},
		Short:   "Uses the given workspace as the current workspace. - means previous, .. parent, . current, ~ home workspace",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.complete(cmd)
			return use.run(cmd.Context(), args[0])
		},
	}
	useCmd.Flags().BoolVar(&use.short, "short", false, "Print only the path of the workspace, e.g. for integration into the shell prompt")

	var short bool
	currentCmd := &cobra.Command{
		Use:   "current [--short]",
		Short: "Print the current workspace. Same as 'kubectl ws .'",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.complete(cmd)
			return o.printCurrent(short)
		},
	}
	currentCmd.Flags().BoolVar(&short, "short", false, "Print only the path of the workspace, e.g. for integration into the shell prompt")

	tree := &treeOptions{options: o}
	treeCmd := &cobra.Command{
		Use:   "tree",
		Short: "Print the tree of workspaces below the current workspace",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.complete(cmd)
			return tree.run(cmd.Context())
		},
	}
	treeCmd.Flags().BoolVarP(&tree.full, "full", "f", false, "Show full workspace paths")

	create := &createOptions{options: o, readyTimeout: time.Minute}
	createCmd := &cobra.Command{
		Use:     "create <name> [--type=<type>] [--enter] [--ignore-existing]",
		Short:   "Creates a new workspace in the current workspace",
		Example: "  kubectl ws create team-a --type root:organization --enter",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.complete(cmd)
			return create.run(cmd.Context(), args[0])
		},
	}
	create.bindFlags(createCmd.Flags())

	createCtx := &createContextOptions{options: o}
	createContextCmd := &cobra.Command{
		Use:   "create-context [<context-name>] [--overwrite]",
		Short: "Creates a kubeconfig context for the current workspace (named after its path by default)",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.complete(cmd)
			name := ""
			if len(args) > 0 {
				name = args[0]
			}
			return createCtx.run(name)
		},
	}
	createContextCmd.Flags().BoolVar(&createCtx.overwrite, "overwrite", false, "Overwrite the context if it already exists")

	for _, c := range []*cobra.Command{useCmd, currentCmd, treeCmd, createCmd, createContextCmd} {
		c.SilenceUsage = true
		cmd.AddCommand(c)
	}
	return cmd
}
