package server

import (
	"context"

	"github.com/meshplane/meshplane/core/internal/virtual/apiresourceschemavw"
)

// boundSchemas lists the APIResourceSchemas of the exports consumer binds.
func (p *parts) boundSchemas(ctx context.Context, consumer string) []apiresourceschemavw.Schema {
	var out []apiresourceschemavw.Schema
	for _, ref := range p.consumers.ExportsOf(consumer) {
		export, err := p.exports.Export(ctx, ref.Cluster, ref.Name)
		if err != nil {
			continue
		}
		for _, r := range export.Spec.Resources {
			out = append(out, apiresourceschemavw.Schema{Cluster: ref.Cluster, Name: r.Schema})
		}
	}
	return out
}
