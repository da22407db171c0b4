// Package cmd defines the meshplane command line.
package cmd

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	genericapiserver "k8s.io/apiserver/pkg/server"

	"github.com/meshplane/meshplane/core/internal/server"
	"github.com/meshplane/meshplane/core/internal/server/options"
)

// NewRoot returns the meshplane command.
func NewRoot() *cobra.Command {
	root := &cobra.Command{
		Use:   "meshplane",
		Short: "Meshplane: a multi-tenant Kubernetes control plane, wire-compatible with kcp",
	}
	root.AddCommand(newStart())
	return root
}

func newStart() *cobra.Command {
	o := options.New()
	cmd := &cobra.Command{
		Use:   "start",
		Short: "Start the core server",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if errs := o.Validate(); len(errs) > 0 {
				return fmt.Errorf("invalid flags: %w", errors.Join(errs...))
			}
			completed, err := o.Complete()
			if err != nil {
				return err
			}
			config, err := server.NewConfig(completed)
			if err != nil {
				return err
			}
			s, err := config.Complete().New()
			if err != nil {
				return err
			}
			return s.Run(genericapiserver.SetupSignalContext())
		},
	}
	o.AddFlags(cmd.Flags())
	return cmd
}
