package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/meshplane/meshplane/platform/launcher"
	"github.com/meshplane/meshplane/sdk/process"
	"github.com/meshplane/meshplane/sdk/testing/framework"
	"github.com/meshplane/meshplane/sdk/testing/openfga"
	"github.com/meshplane/meshplane/sdk/testing/postgres"
)

// security is the package's OpenFGA and security-operator, started with
// the account-operator (organizations and accounts wait for the security
// initializer). It is the production install: OpenFGA on a real
// PostgreSQL server, the operator pointed at it with --openfga-url.
type security struct {
	dir, log string
	pg       *postgres.Server
	fga      *openfga.Server
	proc     *process.Process
	// args and health start the operator again (start).
	args   []string
	health string
}

var sec security

func (s *security) setup(ctx context.Context, srv *framework.Server) error {
	var err error
	if s.dir, err = os.MkdirTemp("", "security-operator-e2e-"); err != nil {
		return err
	}
	if s.pg, err = postgres.Start(ctx, postgres.Options{}); err != nil {
		return fmt.Errorf("PostgreSQL for OpenFGA: %w", err)
	}
	if s.fga, err = openfga.StartServer(ctx, s.dir, openfga.Options{Engine: "postgres", URI: s.pg.DSN("")}); err != nil {
		return err
	}
	bin, err := framework.Binary("security-operator", "operators", "./cmd/security-operator")
	if err != nil {
		return err
	}
	ports, err := process.FreePorts(2)
	if err != nil {
		return err
	}
	health := fmt.Sprintf("127.0.0.1:%d", ports[1])
	s.log = filepath.Join(s.dir, "security-operator.log")
	f, err := os.Create(s.log)
	if err != nil {
		return err
	}
	defer f.Close()
	// The operator's scoped credential, made as `make run` makes it (it
	// also lets the account-operator use the security workspace type);
	// the lifecycle virtual workspaces with the admin's, as `make run`.
	kubeconfig := filepath.Join(s.dir, "security-operator.kubeconfig")
	if _, err := launcher.SecurityOperatorCredential(ctx, srv.Kubeconfig, kubeconfig, launcher.DefaultOperatorTokenTTL); err != nil {
		return fmt.Errorf("the security-operator's credential: %w", err)
	}
	s.health = health
	s.args = []string{bin, "--kubeconfig", kubeconfig,
		"--lifecycle-kubeconfig", srv.Kubeconfig, "--lifecycle-context", "base",
		"--api-changes-kubeconfig", srv.Kubeconfig, "--api-changes-context", "shard-base",
		"--workspace", "root:platform-mesh-system", "--openfga-url", s.fga.URL,
		"--metrics-bind-address", fmt.Sprintf("127.0.0.1:%d", ports[0]), "--health-probe-bind-address", health}
	return s.start(ctx)
}

// start runs the operator with s.args and waits for /readyz.
func (s *security) start(ctx context.Context) error {
	f, err := os.OpenFile(s.log, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	cmd := exec.Command(s.args[0], s.args[1:]...)
	cmd.Stdout, cmd.Stderr = f, f
	if s.proc, err = process.StartProcess(cmd); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if _, err := process.WaitReady(ctx, "http://"+s.health+"/readyz", 200*time.Millisecond, s.proc.Exited()); err != nil {
		return fmt.Errorf("%w\n%s", err, tail(s.log, 40))
	}
	return nil
}

// stop stops the operator, then OpenFGA (TestMain, before the core).
func (s *security) stop() {
	if s.proc != nil {
		if err := s.proc.Stop(30 * time.Second); err != nil {
			fmt.Fprintln(os.Stderr, "stopping the security-operator:", err)
		}
	}
	if s.fga != nil {
		if err := s.fga.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping openfga:", err)
		}
	}
	if s.pg != nil {
		if err := s.pg.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping PostgreSQL:", err)
		}
	}
}
