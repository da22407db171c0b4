package install

import (
	"fmt"

	"helm.sh/helm/v3/pkg/cli/values"
	"helm.sh/helm/v3/pkg/getter"
	"helm.sh/helm/v3/pkg/strvals"
)

// parseSet parses the --set values alone, so a syntax error names the
// offending flag before any file is read or cluster contacted.
func parseSet(sets []string) (map[string]any, error) {
	out := map[string]any{}
	for _, s := range sets {
		if err := strvals.ParseInto(s, out); err != nil {
			return nil, fmt.Errorf("--set %q: %v (want key=value, nested.key=value, list[0]=value; several separated by commas)", s, err)
		}
	}
	return out, nil
}

// mergeValues reads the --values files in order and applies --set on top,
// as `helm install -f ... --set ...` does. The chart's values.schema.json
// is checked later, against the chart's defaults merged with these.
func (o *Options) mergeValues() (map[string]any, error) {
	if _, err := parseSet(o.Set); err != nil {
		return nil, err
	}
	opts := values.Options{ValueFiles: o.ValueFiles, Values: o.Set}
	vals, err := opts.MergeValues(getter.Providers{})
	if err != nil {
		return nil, fmt.Errorf("values: %w", err)
	}
	return vals, nil
}
