package exec

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
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
// protobuf (the core encodes it in 0.7x the time of JSON). When the list
// field's selection reads members only (no relation) and sortBy is unset,
// the answer stays protobuf and its items are written straight from it
// (the returned List); otherwise it is transcoded to JSON keeping what the
// selection reads. Other kinds come as JSON.
func (r *run) listRequest(ctx context.Context, res *schema.Resource, req kube.Request, f graphql.CollectedField, sortBy string) (*kube.Body, *pbjson.List, error) {
	gvk := k8sschema.GroupVersionKind{Group: res.Group, Version: res.Version, Kind: res.Kind + "List"}
	_, refused := noProtobuf.Load(gvk)
	if refused || !pbjson.Supports(gvk) {
		body, err := r.e.Kube.DoPooled(ctx, r.caller.Token, req)
		return body, nil, err
	}
	req.Accept = protobufAccept
	body, err := r.e.Kube.DoPooled(ctx, r.caller.Token, req)
	if err != nil || !strings.HasPrefix(body.ContentType(), pbjson.ContentType) {
		return body, nil, err
	}
	var proj pbjson.Projection // everything, for sortBy
	if sortBy == "" {
		proj = r.listProjection(f)
		if proj != nil {
			if list, err := pbjson.ParseList(body.Bytes()); err == nil {
				return body, list, nil
			}
		}
	}
	err = body.Rewrite("application/json", func(dst *bytes.Buffer, src []byte) error {
		return pbjson.Transcode(dst, src, proj)
	})
	if err == nil {
		return body, nil, nil
	}
	body.Release()
	klog.InfoS("the core's protobuf answer could not be transcoded; asking for JSON from now on", "kind", gvk, "err", err)
	noProtobuf.Store(gvk, struct{}{})
	req.Accept = ""
	body, err = r.e.Kube.DoPooled(ctx, r.caller.Token, req)
	return body, nil, err
}

// protoItems are the items of a protobuf list answer, written straight
// from it by the selection.
type protoItems struct{ list *pbjson.List }

// writeProtoItems writes items as list type typ with selection sel: by a
// plan compiled from the selection, or (when a member's wire form does
// not fit its GraphQL type) item by item from their JSON.
func (r *run) writeProtoItems(ctx context.Context, w *bytes.Buffer, typ *ast.Type, sel ast.SelectionSet, items *protoItems, path *pathNode) {
	if typ.Elem == nil {
		w.WriteString("null")
		return
	}
	itemType := namedType(typ)
	specs, ok := r.specs(sel, itemType, true)
	if ok {
		plan, err := pbjson.Compile(items.list.Kind, specs)
		if err == nil {
			mark := w.Len()
			if err = plan.WriteItems(w, items.list.Items); err == nil {
				return
			}
			w.Truncate(mark)
		}
		klog.V(2).InfoS("writing a list from JSON", "kind", items.list.Kind, "err", err)
	}
	w.WriteByte('[')
	for i, it := range items.list.Items {
		if i > 0 {
			w.WriteByte(',')
		}
		var b bytes.Buffer
		if err := pbjson.ItemJSON(&b, items.list.Kind, it); err != nil {
			r.fail(r.node(path, "", i), err)
			w.WriteString("null")
			continue
		}
		r.value(ctx, w, typ.Elem, sel, json.RawMessage(b.Bytes()), r.node(path, "", i))
	}
	w.WriteByte(']')
}

// specs compiles selection sel of object type typeName for pbjson, with
// the executor's rules for JSON answers: an item's kind and apiVersion
// come from its type, leaves are coerced to String and Int. False when
// the selection reads anything but members.
func (r *run) specs(sel ast.SelectionSet, typeName string, item bool) ([]pbjson.Spec, bool) {
	def := r.e.Model.Schema.Types[typeName]
	if def == nil || def.Kind != ast.Object || strings.HasPrefix(typeName, "__") {
		return nil, false
	}
	plans := r.plan(sel, typeName, def)
	out := make([]pbjson.Spec, 0, len(plans))
	for _, p := range plans {
		s := pbjson.Spec{Key: p.f.Alias}
		if p.f.Name == "__typename" {
			s.Const = strconv.AppendQuote(nil, typeName)
			out = append(out, s)
			continue
		}
		if p.info == nil || p.fd == nil || p.info.Kind != schema.Property {
			return nil, false
		}
		if item && (p.info.JSON == "kind" || p.info.JSON == "apiVersion") {
			s.Const = []byte("null")
			if tm, ok := r.e.typeMetaOf(typeName); ok {
				s.Const = tm.kind
				if p.info.JSON == "apiVersion" {
					s.Const = tm.apiVersion
				}
			}
			out = append(out, s)
			continue
		}
		s.Member = p.info.JSON
		t := p.fd.Type
		if t.Elem != nil {
			if t.Elem.Elem != nil {
				return nil, false
			}
			s.List = true
		}
		named := namedType(t)
		td := r.e.Model.Schema.Types[named]
		if td == nil {
			return nil, false
		}
		switch td.Kind {
		case ast.Object:
			sub, ok := r.specs(p.f.Selections, named, false)
			if !ok {
				return nil, false
			}
			s.Sub = sub
		case ast.Scalar, ast.Enum:
			switch named {
			case "String":
				s.Coerce = pbjson.ToString
			case "Int":
				s.Coerce = pbjson.ToInt
			}
		default:
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
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
