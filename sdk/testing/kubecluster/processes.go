package kubecluster

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"time"

	"github.com/meshplane/meshplane/sdk/process"
)

// run starts a component, its output in Dir/logs/<name>.log.
func (c *Cluster) run(name, bin string, args ...string) (*namedProcess, error) {
	if err := os.MkdirAll(c.path("logs"), 0o755); err != nil {
		return nil, err
	}
	log, err := os.OpenFile(c.path("logs", name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.Dir = c.Dir
	p, err := process.StartProcess(cmd)
	if err != nil {
		log.Close()
		return nil, err
	}
	np := &namedProcess{name: name, p: p, log: log}
	c.procs = append(c.procs, np)
	return np, nil
}

// stopProcess stops one component by its PID (SIGTERM, then SIGKILL).
func (c *Cluster) stopProcess(np *namedProcess) {
	if np == nil || np.p == nil {
		return
	}
	if np.p.Running() {
		_ = np.p.Stop(20 * time.Second)
	}
	np.log.Close()
	np.p = nil
}

// poll calls check every interval until it returns true, returns an error,
// the process np (if any) exits, or timeout passes; the last reason check
// gave is in the timeout's error.
func poll(ctx context.Context, what string, timeout time.Duration, np *namedProcess, check func(context.Context) (bool, string, error)) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	last := "not checked yet"
	for {
		ok, why, err := check(ctx)
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		if why != "" {
			last = why
		}
		var exited <-chan struct{}
		if np != nil && np.p != nil {
			exited = np.p.Exited()
		}
		select {
		case <-exited:
			return fmt.Errorf("%s: %s exited (%v); see logs/%s.log", what, np.name, np.p.ExitErr(), np.name)
		case <-ctx.Done():
			return fmt.Errorf("%s: not within %s: %s", what, timeout, last)
		case <-time.After(250 * time.Millisecond):
		}
	}
}
