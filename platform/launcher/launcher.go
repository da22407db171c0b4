// Package launcher runs a whole Meshplane platform on one machine as one
// process tree: the core and every platform component, each on a fixed
// offset from one port base, with one log stream in which each line names
// its component. When everything is ready it writes <root>/platform.env,
// the contract scripts and tests wait for. A component that dies is
// started again (status.json counts the restarts); the others keep
// running.
package launcher

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/meshplane/meshplane/sdk/platformenv"
)

// Config says where and how to run a platform.
type Config struct {
	// RootDir holds all state; the core's files are directly in it.
	RootDir string
	// Ports is the platform's port range.
	Ports Ports
	// BinDir holds the binaries (meshplane, ...).
	BinDir string
	// DemoUsers creates the local demo users alice and bob.
	DemoUsers bool
	// AuthenticationConfig is the core's --authentication-config file
	// (OIDC/JWT issuers), absolute; empty: none.
	AuthenticationConfig string
	// CoreArgs are appended to `meshplane start`.
	CoreArgs []string
	// MountAllowedHosts is every shard's --mount-allowed-hosts.
	MountAllowedHosts []string
	// Examples names the example providers to run too (see Examples).
	Examples []string
	// ExamplesDir holds the examples' manifests (examples/ of the repository).
	ExamplesDir string
	// AccountOperatorArgs are appended to the account-operator's arguments.
	AccountOperatorArgs []string
	// SecurityOperatorArgs are appended to the security-operator's
	// arguments, OpenFGAArgs to those of `openfga run`.
	SecurityOperatorArgs, OpenFGAArgs []string
	// Out receives the log stream.
	Out io.Writer
	// ReadyTimeout bounds the wait for each component.
	ReadyTimeout time.Duration
	// StopGrace is how long a component may take to stop on SIGTERM.
	StopGrace time.Duration
	// OrganizationStores is the security-operator's --organization-stores
	// (per-organization or shared; "" its default).
	OrganizationStores string
	// ExternalOpenFGA is the HTTP API of an OpenFGA the platform uses
	// instead of starting its own (--openfga-url).
	ExternalOpenFGA string
	// ExternalOpenFGAKeyFile holds the external OpenFGA's preshared API key
	// (--openfga-preshared-key-file); the launcher's own OpenFGA gets a key
	// it makes in the root directory.
	ExternalOpenFGAKeyFile string
	// Shards is how many core shards to run (1 to MaxShards): shard b
	// comes with the front proxy, and the platform's KUBECONFIG is then the
	// proxy's; shards c and d widen the port range (ExtendedPortRange).
	Shards int
	// OperatorTokenTTL is the lifetime of the account-operator's token (0:
	// DefaultOperatorTokenTTL); OperatorTokenRefresh the age at which the
	// next is minted (0: 80% of the lifetime).
	OperatorTokenTTL, OperatorTokenRefresh time.Duration

	// logf writes a line of the log stream (set by Run).
	logf func(name, format string, args ...any)
}

// CoreURL is the core's base URL.
func (c *Config) CoreURL() string { return fmt.Sprintf("https://127.0.0.1:%d", c.Ports.Core()) }

// EnvFile is the path of platform.env.
func (c *Config) EnvFile() string { return filepath.Join(c.RootDir, platformenv.FileName) }

// components lists what the platform runs, in start order. The
// rebac-authz-webhook comes before the operators: the core asks it about
// requests RBAC does not allow, and the operators' first requests would
// otherwise find it not listening yet (an error logged per request).
func components(c *Config) []Component {
	comps := append([]Component{coreComponent(c)}, shardComponents(c)...)
	comps = append(comps, openFGAComponents(c)...)
	comps = append(comps, rebacComponent(c), accountOperatorComponent(c), securityOperatorComponent(c), graphqlComponent(c))
	return append(comps, exampleComponents(c)...)
}

// Run starts the platform and supervises it until ctx ends, then stops
// every component, newest first. A component that exits on its own is
// started again (supervise) while the others keep running; each one's
// state and restart count are in <root>/status.json.
func Run(ctx context.Context, c Config) error {
	if err := c.prepare(); err != nil {
		return err
	}
	comps := components(&c)
	logs := &logStream{out: c.Out, pad: len("launcher")}
	for _, comp := range comps {
		logs.pad = max(logs.pad, len(comp.Name))
	}
	say := func(format string, args ...any) { logs.printf("launcher", format, args...) }
	c.logf = logs.printf
	status := newStatusWriter(c.StatusFile(), comps)

	// Supervision ends before anything is stopped, so a component stopped
	// on the way out is not started again.
	superviseCtx, endSupervision := context.WithCancel(ctx)
	var supervisors sync.WaitGroup
	var running []*supervised
	var cleanups []func() error
	defer func() {
		endSupervision()
		supervisors.Wait()
		defer func() {
			for i := len(cleanups) - 1; i >= 0; i-- {
				if err := cleanups[i](); err != nil {
					say("cleaning up: %v", err)
				}
			}
			if err := status.stopped(); err != nil {
				say("writing %s: %v", c.StatusFile(), err)
			}
		}()
		os.Remove(c.EnvFile())
		for i := len(running) - 1; i >= 0; i-- {
			s := running[i].current()
			if !s.proc.Running() {
				continue
			}
			say("stopping %s (pid %d)", s.name, s.proc.PID())
			if err := s.proc.Stop(c.StopGrace); err != nil {
				say("%s: %v", s.name, err)
			} else if err := s.proc.ExitErr(); err != nil {
				say("%s exited with %v", s.name, err)
			}
		}
	}()

	var env []platformenv.Entry
	for _, comp := range comps {
		if comp.Cleanup != nil {
			cleanups = append(cleanups, comp.Cleanup)
		}
		if comp.BeforeStart != nil {
			if err := comp.BeforeStart(ctx); err != nil {
				return fmt.Errorf("preparing %s: %w", comp.Name, err)
			}
		}
		p, err := c.start(logs, comp)
		if err != nil {
			return err
		}
		sup := &supervised{comp: comp, cur: p}
		running = append(running, sup)
		c.setStatus(status, comp.Name, func(cs *ComponentStatus) { cs.State, cs.PID = StateStarting, p.proc.PID() })
		if err := c.awaitReady(ctx, comp, p); err != nil {
			return err
		}
		if comp.AfterReady != nil {
			if err := comp.AfterReady(ctx); err != nil {
				return fmt.Errorf("setting up %s: %w", comp.Name, err)
			}
		}
		c.setStatus(status, comp.Name, func(cs *ComponentStatus) { cs.State = StateRunning })
		supervisors.Add(1)
		go func() {
			defer supervisors.Done()
			c.supervise(superviseCtx, logs, status, sup)
		}()
		say("%s is ready", comp.Name)
		env = append(env, comp.Env...)
	}
	if err := platformenv.Write(c.EnvFile(), env); err != nil {
		return fmt.Errorf("writing %s: %w", c.EnvFile(), err)
	}
	c.printWelcome(say, env)

	<-ctx.Done()
	say("shutting down")
	return nil
}

// prepare validates the configuration and readies the root directory:
// platform.env is removed first, so its presence always means "ready".
func (c *Config) prepare() error {
	if c.Out == nil {
		c.Out = os.Stdout
	}
	if c.ReadyTimeout <= 0 {
		c.ReadyTimeout = 3 * time.Minute
	}
	if c.StopGrace <= 0 {
		c.StopGrace = time.Minute
	}
	if c.Shards == 0 {
		c.Shards = 1
	}
	if err := checkShards(c.Shards); err != nil {
		return err
	}
	c.Ports.Shards = c.Shards
	if err := c.Ports.Validate(); err != nil {
		return err
	}
	root, err := filepath.Abs(c.RootDir)
	if err != nil {
		return err
	}
	c.RootDir = root
	if err := os.MkdirAll(root, 0o755); err != nil {
		return err
	}
	if err := os.Remove(c.EnvFile()); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if err := c.Ports.CheckFree(); err != nil {
		return err
	}
	if c.DemoUsers {
		if err := ensureDemoUsers(filepath.Join(root, demoUsersFile)); err != nil {
			return fmt.Errorf("demo users: %w", err)
		}
	}
	return nil
}

func (c *Config) start(logs *logStream, comp Component) (*started, error) {
	logs.printf("launcher", "starting %s: %s", comp.Name, filepath.Join(c.BinDir, comp.Binary))
	return c.launch(logs, comp)
}

// launch starts the component's process (without a log line: a restart
// has its own).
func (c *Config) launch(logs *logStream, comp Component) (*started, error) {
	bin := filepath.Join(c.BinDir, comp.Binary)
	if _, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("%s: binary %s not found (run `make build`): %w", comp.Name, bin, err)
	}
	return startComponent(logs, comp.Name, c.RootDir, bin, comp.Args, comp.Environ)
}

// awaitReady waits for the component's readiness, giving up when it exits,
// when ctx ends, or after ReadyTimeout.
func (c *Config) awaitReady(ctx context.Context, comp Component, p *started) error {
	ctx, cancel := context.WithTimeout(ctx, c.ReadyTimeout)
	defer cancel()
	go func() {
		select {
		case <-p.proc.Exited():
			cancel()
		case <-ctx.Done():
		}
	}()
	err := comp.Ready(ctx)
	select {
	case <-p.proc.Exited():
		return fmt.Errorf("%s exited before it was ready: %v", comp.Name, p.exitReason())
	default:
	}
	if err != nil {
		return fmt.Errorf("%s: %w", comp.Name, err)
	}
	return nil
}

func (c *Config) printWelcome(say func(string, ...any), env []platformenv.Entry) {
	say("the platform is ready; %s:", c.EnvFile())
	for _, e := range env {
		say("  %s=%s", e.Key, e.Value)
	}
	say("try:")
	kubeconfig := filepath.Join(c.RootDir, adminKubeconfig)
	if c.Shards > 1 {
		kubeconfig = c.ProxyKubeconfig()
	}
	say("  export KUBECONFIG=%s", kubeconfig)
	say("  kubectl get workspaces")
	if c.DemoUsers {
		say("  kubectl --context alice auth whoami   # demo users alice and bob")
	}
	say("stop with Ctrl-C; state stays in %s", c.RootDir)
}
