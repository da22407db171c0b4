// Package install is `meshplane-platform install` and `uninstall`: the
// umbrella Helm chart installed or upgraded into a Kubernetes cluster with
// the Helm SDK, each component's readiness shown as it comes, and the
// platform's admin kubeconfig and platform.env written afterwards.
//
// Steps, one file each: values.go and chart.go (input), render.go
// (--dry-run), apply.go (install or upgrade), progress.go/state.go (wait
// and progress), diagnose.go (why a component is not ready), outputs.go and
// reach.go (kubeconfig, platform.env, addresses), uninstall.go.
package install

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/meshplane/meshplane/sdk/platformenv"
)

// Install installs or upgrades the platform as o says.
func Install(ctx context.Context, o *Options) error {
	if err := o.Validate(); err != nil {
		return err
	}
	p, err := o.prepare()
	if err != nil {
		return err
	}
	// Render once without a cluster: template and values.schema.json errors
	// stop here, before anything is changed.
	manifest, err := p.render(o)
	if err != nil {
		return err
	}
	if o.DryRun {
		_, err := fmt.Fprint(o.Out, manifest)
		return err
	}
	c, err := o.connect()
	if err != nil {
		return err
	}

	start := time.Now()
	applyCtx, cancel := context.WithTimeout(ctx, o.timeoutFor())
	defer cancel()
	prog := newProgress(o.Out, o.ReleaseName, start)
	stopWatch := func() {}
	if o.Wait {
		stopWatch = prog.watch(applyCtx, c.client, o.Namespace)
	}
	rel, upgraded, err := o.apply(applyCtx, c, p)
	stopWatch()
	if err != nil {
		return o.failure(c, prog, err)
	}
	op := "installed"
	if upgraded {
		op = "upgraded"
	}
	fmt.Fprintf(o.Out, "release %s %s (revision %d, namespace %s) in %s\n", rel.Name, op, rel.Version, rel.Namespace, time.Since(start).Round(time.Second))
	if o.Wait && prog.count() > 0 {
		fmt.Fprintf(o.Out, "all %d components ready\n", prog.count())
	}
	if c.forwarder != nil {
		defer c.forwarder.stop()
	}
	out, err := o.writeOutputs(ctx, c)
	if err != nil {
		return fmt.Errorf("the platform is %s, but writing its outputs failed: %w", op, err)
	}
	envFile := filepath.Join(out.dir, platformenv.FileName)
	out.print(o.Out, envFile)
	if c.forwarder == nil || !c.forwarder.active() {
		return nil
	}
	// Like `make run`: the URLs live as long as this process, and so does
	// platform.env.
	fmt.Fprintln(o.Out, "forwarding; stop with Ctrl-C")
	<-ctx.Done()
	if err := os.Remove(envFile); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// failure adds to a failed wait (timeout, failed Job) the components that
// are not ready and why, read with a fresh deadline (the install's may be
// over). Other errors (a refused object, a pending release) stand alone.
func (o *Options) failure(c *cluster, prog *progress, err error) error {
	pending := prog.notReady()
	failed := slices.ContainsFunc(pending, func(w workload) bool { return w.State.Failed })
	timeout := errors.Is(err, context.DeadlineExceeded) || isTimeout(err)
	if len(pending) == 0 || !(failed || timeout) {
		return err
	}
	what := "failed"
	if timeout {
		what = fmt.Sprintf("not ready after %s", o.Timeout)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return fmt.Errorf("%w\ncomponents %s:\n%s", err, what, diagnose(ctx, c.client, o.Namespace, o.ReleaseName, pending))
}

// isTimeout: Helm reports its wait's end as text ("timed out waiting for
// the condition", "context deadline exceeded").
func isTimeout(err error) bool {
	s := err.Error()
	return strings.Contains(s, "timed out") || strings.Contains(s, "deadline exceeded")
}
