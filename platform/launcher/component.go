package launcher

import (
	"context"

	"github.com/meshplane/meshplane/sdk/platformenv"
)

// Component is one process of the platform. The launcher starts components
// in order, each once the previous one is ready, starts one again when it
// exits, and stops them in reverse.
type Component struct {
	// Name prefixes the component's log lines.
	Name string
	// Binary is the program's file name in the bin directory.
	Binary string
	// Args are the program's arguments.
	Args []string
	// Environ are KEY=value pairs added to the launcher's environment for
	// the program (e.g. the path of a key file; never a secret itself).
	Environ []string
	// BeforeStart, when set, runs right before the component starts (once
	// the components before it are ready), e.g. to write its credential.
	BeforeStart func(ctx context.Context) error
	// Ready blocks until the component serves, or ctx ends.
	Ready func(ctx context.Context) error
	// AfterReady, when set, runs once the component is ready (set-up that
	// needs it serving, such as the core's demo users).
	AfterReady func(ctx context.Context) error
	// AfterRestart, when set, runs each time the launcher started the
	// component again after it exited and it is ready (BeforeStart and
	// AfterReady run only once), e.g. to redo what a restart rewrote.
	AfterRestart func(ctx context.Context) error
	// Cleanup, when set, runs after the component's process stopped (or
	// when it failed to start after BeforeStart ran), e.g. to stop a helper
	// BeforeStart started.
	Cleanup func() error
	// Env are the platform.env lines the component contributes.
	Env []platformenv.Entry
}
