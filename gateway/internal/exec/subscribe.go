package exec

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/meshplane/meshplane/gateway/internal/kube"
	"github.com/meshplane/meshplane/gateway/internal/schema"
)

// subscribe opens the watch behind a subscription's single root field and
// returns a handler that yields one response per event.
func (r *run) subscribe(ctx context.Context) graphql.ResponseHandler {
	fields := graphql.CollectFields(r.oc, r.oc.Operation.SelectionSet, []string{"Subscription"})
	if len(fields) != 1 {
		return graphql.OneShot(graphql.ErrorResponse(ctx, "a subscription selects exactly one field"))
	}
	f := fields[0]
	info := r.e.Model.Fields["Subscription"][f.Name]
	def := r.e.Model.Schema.Types["Subscription"].Fields.ForName(f.Name)
	if info == nil || info.Kind != schema.Subscribe || def == nil {
		return graphql.OneShot(graphql.ErrorResponse(ctx, "unknown subscription field %s", f.Name))
	}
	res := info.Resource
	args := f.ArgumentMap(r.oc.Variables)
	ns := str(args, "namespace")
	if !res.Namespaced {
		ns = ""
	}
	fieldSel := str(args, "fieldselector")
	if name := str(args, "name"); name != "" {
		if fieldSel != "" {
			fieldSel += ","
		}
		fieldSel += "metadata.name=" + name
	}
	path := kube.ResourcePath(r.caller.Workspace, res.Group, res.Version, res.Resource, ns, "")
	events, stop, err := r.e.Hub.Subscribe(ctx, r.caller.Token, path, str(args, "labelselector"), fieldSel, str(args, "resourceVersion"))
	if err != nil {
		resp := &graphql.Response{Errors: gqlerror.List{{Message: fmt.Sprintf("watching %s: %v", res.Resource, err), Path: ast.Path{ast.PathName(f.Alias)}, Extensions: extensionsOf(err)}}}
		return graphql.OneShot(resp)
	}
	go func() {
		<-ctx.Done()
		stop()
	}()
	failed := false
	return func(ctx context.Context) *graphql.Response {
		if failed {
			// The watch ended with an error, reported in the last response.
			stop()
			return nil
		}
		select {
		case <-ctx.Done():
			stop()
			return nil
		case ev, ok := <-events:
			if !ok {
				return nil
			}
			if ev.Err != nil {
				failed = true
				return &graphql.Response{Errors: gqlerror.List{{Message: ev.Err.Error(), Path: ast.Path{ast.PathName(f.Alias)}, Extensions: extensionsOf(ev.Err)}}}
			}
			run := &run{e: r.e, oc: r.oc, caller: r.caller}
			var buf bytes.Buffer
			buf.WriteByte('{')
			writeString(&buf, f.Alias)
			buf.WriteByte(':')
			run.value(ctx, &buf, def.Type, f.Selections, map[string]any{"type": ev.Type, "object": ev.Object}, &pathNode{name: f.Alias})
			buf.WriteByte('}')
			return &graphql.Response{Data: buf.Bytes(), Errors: run.errs}
		}
	}
}

// extensionsOf are the GraphQL extensions of an error that has them (the
// core's Status, a revoked access).
func extensionsOf(err error) map[string]any {
	var x interface{ Extensions() map[string]any }
	if errors.As(err, &x) {
		return x.Extensions()
	}
	return nil
}
