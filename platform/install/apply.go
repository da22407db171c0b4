package install

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"
)

// maxHistory bounds the release Secrets an upgrade keeps (helm rollback
// can go back that far).
const maxHistory = 10

// currentRelease is the release's latest revision, nil when there is none.
func currentRelease(cfg *action.Configuration, name string) (*release.Release, error) {
	h := action.NewHistory(cfg)
	h.Max = 1
	rels, err := h.Run(name)
	if errors.Is(err, driver.ErrReleaseNotFound) || (err == nil && len(rels) == 0) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading release %s: %w", name, err)
	}
	last := rels[0]
	for _, r := range rels {
		if r.Version > last.Version {
			last = r
		}
	}
	return last, nil
}

// apply installs the chart when the release does not exist and upgrades it
// otherwise. Helm waits (Deployments, StatefulSets, Jobs, hooks) when
// o.Wait; ctx bounds the whole operation.
func (o *Options) apply(ctx context.Context, c *cluster, p *prepared) (*release.Release, bool, error) {
	cur, err := currentRelease(c.helm, o.ReleaseName)
	if err != nil {
		return nil, false, err
	}
	if cur == nil || cur.Info.Status == release.StatusUninstalled {
		in := action.NewInstall(c.helm)
		in.ReleaseName, in.Namespace = o.ReleaseName, o.Namespace
		in.CreateNamespace = o.CreateNamespace
		in.Wait, in.WaitForJobs, in.Timeout = o.Wait, o.Wait, o.Timeout
		in.Replace = cur != nil
		rel, err := in.RunWithContext(ctx, p.chart, p.values)
		return rel, false, applyError("install", o.ReleaseName, err)
	}
	if cur.Info.Status.IsPending() {
		return nil, true, fmt.Errorf("release %s is %s (an earlier install or upgrade was interrupted): roll it back with `helm rollback %s -n %s` or remove it with `meshplane-platform uninstall`",
			o.ReleaseName, cur.Info.Status, o.ReleaseName, o.Namespace)
	}
	up := action.NewUpgrade(c.helm)
	up.Namespace = o.Namespace
	up.Wait, up.WaitForJobs, up.Timeout = o.Wait, o.Wait, o.Timeout
	up.MaxHistory = maxHistory
	up.ReuseValues, up.ResetValues = o.ReuseValues, !o.ReuseValues
	rel, err := up.RunWithContext(ctx, o.ReleaseName, p.chart, p.values)
	return rel, true, applyError("upgrade", o.ReleaseName, err)
}

func applyError(op, name string, err error) error {
	if err == nil {
		return nil
	}
	if strings.Contains(err.Error(), "values don't meet the specifications of the schema") {
		return fmt.Errorf("values refused by the chart's values.schema.json: %w", err)
	}
	return fmt.Errorf("%s of release %s: %w", op, name, err)
}

// timeoutFor bounds apply: Helm's wait and its hooks each get o.Timeout, the
// whole run a little more so that Helm reports its own timeout first.
func (o *Options) timeoutFor() time.Duration { return o.Timeout + o.Timeout/10 + 10*time.Second }
