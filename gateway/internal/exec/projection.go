package exec

import (
	"bytes"
	"context"
	"strings"
	"sync"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2"

	"github.com/meshplane/meshplane/gateway/internal/kube"
	"github.com/meshplane/meshplane/gateway/internal/pbjson"
	"github.com/meshplane/meshplane/gateway/internal/schema"
)

// noProtobuf remembers list kinds whose protobuf answer could not be
// transcoded: they are asked for as JSON from then on.
var noProtobuf sync.Map // k8sschema.GroupVersionKind -> struct{}

// protobufAccept asks for protobuf, JSON when the core has no protobuf
// form of the resource (a CRD of the same group, version and kind).
const protobufAccept = pbjson.ContentType + ", application/json"

// listRequest runs a list request. A built-in kind is asked for as
// protobuf (the core encodes it in 0.7x the time of JSON) and transcoded
// to JSON keeping only what the list field's selection reads (proj, see
// listProjection); other kinds come as JSON.
func (r *run) listRequest(ctx context.Context, res *schema.Resource, req kube.Request, proj func() pbjson.Projection) (*kube.Body, error) {
	gvk := k8sschema.GroupVersionKind{Group: res.Group, Version: res.Version, Kind: res.Kind + "List"}
	_, refused := noProtobuf.Load(gvk)
	if refused || !pbjson.Supports(gvk) {
		return r.e.Kube.DoPooled(ctx, r.caller.Token, req)
	}
	req.Accept = protobufAccept
	body, err := r.e.Kube.DoPooled(ctx, r.caller.Token, req)
	if err != nil || !strings.HasPrefix(body.ContentType(), pbjson.ContentType) {
		return body, err
	}
	p := proj()
	err = body.Rewrite("application/json", func(dst *bytes.Buffer, src []byte) error {
		return pbjson.Transcode(dst, src, p)
	})
	if err == nil {
		return body, nil
	}
	body.Release()
	klog.InfoS("the core's protobuf answer could not be transcoded; asking for JSON from now on", "kind", gvk, "err", err)
	noProtobuf.Store(gvk, struct{}{})
	req.Accept = ""
	return r.e.Kube.DoPooled(ctx, r.caller.Token, req)
}

// listProjection is what list field f's selection reads of the core's
// answer: the list's metadata and, of its items, the members the item
// selections reach (everything when a relation or anything else needs
// the whole object).
func (r *run) listProjection(f graphql.CollectedField) pbjson.Projection {
	if f.Definition == nil {
		return nil
	}
	listType := namedType(f.Definition.Type)
	var items projection
	for _, p := range r.plan(f.Selections, listType, r.e.Model.Schema.Types[listType]) {
		if p.info == nil || p.info.Kind != schema.Property || p.info.JSON != "items" || p.fd == nil {
			continue
		}
		sub := r.project(p.f.Selections, namedType(p.fd.Type))
		if sub.all {
			return nil
		}
		items.merge(sub)
	}
	return pbjson.Projection{"metadata": nil, "items": items.members}
}

// projection is a pbjson.Projection under construction: all, or the
// members (each nil for all of it).
type projection struct {
	all     bool
	members pbjson.Projection
}

func (p *projection) merge(q projection) {
	if p.all || q.all {
		*p = projection{all: true}
		return
	}
	if p.members == nil {
		p.members = pbjson.Projection{}
	}
	for k, v := range q.members {
		old, ok := p.members[k]
		switch {
		case !ok:
			p.members[k] = v
		case old == nil || v == nil:
			p.members[k] = nil
		default:
			m := projection{members: old}
			m.merge(projection{members: v})
			p.members[k] = m.members
		}
	}
}

// project is what selection sel of object type typeName reads.
func (r *run) project(sel ast.SelectionSet, typeName string) projection {
	def := r.e.Model.Schema.Types[typeName]
	if def == nil || def.Kind != ast.Object || strings.HasPrefix(typeName, "__") {
		return projection{all: true}
	}
	out := projection{members: pbjson.Projection{}}
	for _, p := range r.plan(sel, typeName, def) {
		if p.f.Name == "__typename" {
			continue
		}
		if p.info == nil || p.fd == nil || p.info.Kind != schema.Property {
			// A relation reads the object's metadata and references.
			return projection{all: true}
		}
		member := projection{members: pbjson.Projection{p.info.JSON: nil}}
		t := namedType(p.fd.Type)
		if td := r.e.Model.Schema.Types[t]; td != nil && td.Kind == ast.Object && len(p.f.Selections) > 0 {
			sub := r.project(p.f.Selections, t)
			if !sub.all {
				member.members[p.info.JSON] = sub.members
			} else if r.hasRelation(p.f.Selections, t) {
				return projection{all: true}
			}
		}
		out.merge(member)
	}
	return out
}

// hasRelation reports a relation anywhere in sel.
func (r *run) hasRelation(sel ast.SelectionSet, typeName string) bool {
	def := r.e.Model.Schema.Types[typeName]
	if def == nil || def.Kind != ast.Object {
		return false
	}
	for _, p := range r.plan(sel, typeName, def) {
		if p.info != nil && p.info.Kind == schema.Relation {
			return true
		}
		if p.fd != nil && len(p.f.Selections) > 0 && r.hasRelation(p.f.Selections, namedType(p.fd.Type)) {
			return true
		}
	}
	return false
}

func namedType(t *ast.Type) string {
	for t.Elem != nil {
		t = t.Elem
	}
	return t.NamedType
}
