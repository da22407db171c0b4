package install

import (
	"fmt"
	"io"
	"strings"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
)

// prepared is the chart and the user's values, checked.
type prepared struct {
	chart  *chart.Chart
	values map[string]any
}

// prepare loads the umbrella chart and merges the values.
func (o *Options) prepare() (*prepared, error) {
	fsys, dir, err := chartSource(o.Charts, o.Chart)
	if err != nil {
		return nil, err
	}
	ch, err := loadChart(fsys, dir)
	if err != nil {
		return nil, err
	}
	vals, err := o.mergeValues()
	if err != nil {
		return nil, err
	}
	return &prepared{chart: ch, values: vals}, nil
}

// Render renders the chart as `helm template` does (no cluster contacted:
// lookups find nothing, capabilities are Helm's defaults) and writes its
// manifests, hooks included, to out. values.schema.json is enforced.
func Render(o *Options, out io.Writer) error {
	p, err := o.prepare()
	if err != nil {
		return err
	}
	manifest, err := p.render(o)
	if err != nil {
		return err
	}
	_, err = io.WriteString(out, manifest)
	return err
}

func (p *prepared) render(o *Options) (string, error) {
	in := action.NewInstall(&action.Configuration{Log: func(string, ...any) {}})
	in.DryRun, in.ClientOnly = true, true
	in.ReleaseName, in.Namespace = o.ReleaseName, o.Namespace
	rel, err := in.Run(p.chart, p.values)
	if err != nil {
		return "", renderError(err)
	}
	var b strings.Builder
	b.WriteString(rel.Manifest)
	for _, h := range rel.Hooks {
		fmt.Fprintf(&b, "---\n# Source: %s\n%s\n", h.Path, h.Manifest)
	}
	return b.String(), nil
}

// renderError says which step refused the values.
func renderError(err error) error {
	if strings.Contains(err.Error(), "values don't meet the specifications of the schema") {
		return fmt.Errorf("values refused by the chart's values.schema.json: %w", err)
	}
	return fmt.Errorf("rendering the chart: %w", err)
}
