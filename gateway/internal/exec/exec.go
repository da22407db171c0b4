// Package exec implements gqlgen's graphql.ExecutableSchema over a
// generated schema.Model: no generated code, a small interpreter that walks
// the operation's selection sets and resolves each field against the core
// with the caller's token.
package exec

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"sigs.k8s.io/yaml"

	"github.com/meshplane/meshplane/gateway/internal/kube"
	"github.com/meshplane/meshplane/gateway/internal/schema"
	"github.com/meshplane/meshplane/gateway/internal/watch"
)

// Caller is who a request runs for.
type Caller struct {
	Workspace string
	Token     string
	// Streaming is set for a websocket or a server-sent-events request,
	// the transports a subscription can stream over.
	Streaming bool
}

type callerKey struct{}

// WithCaller puts the caller into ctx.
func WithCaller(ctx context.Context, c Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// CallerFrom reads the caller from ctx.
func CallerFrom(ctx context.Context) (Caller, bool) {
	c, ok := ctx.Value(callerKey{}).(Caller)
	return c, ok
}

// Executable is one generated schema, shared by every workspace with the
// same API set.
type Executable struct {
	Model *schema.Model
	Hash  string
	Kube  *kube.Client
	Hub   *watch.Hub

	// lastSize is the size of the last answer written.
	lastSize atomic.Int64

	typesOnce sync.Once
	byType    map[string]*schema.Resource
	typeMeta  map[string]typeMeta
}

// typeMeta is the kind and apiVersion of a resource type, as JSON.
type typeMeta struct{ kind, apiVersion json.RawMessage }

// concreteType is the object type of an object of a union, from its
// apiVersion and kind ("" when the workspace does not serve it).
func (r *run) concreteType(v any) string {
	var av, kind string
	switch m := v.(type) {
	case map[string]any:
		av, _ = m["apiVersion"].(string)
		kind, _ = m["kind"].(string)
	case rawObject:
		_ = json.Unmarshal(m.get("apiVersion"), &av)
		_ = json.Unmarshal(m.get("kind"), &kind)
	}
	if res := r.e.Model.ByKind[av+"/"+kind]; res != nil {
		return res.TypeName
	}
	return ""
}

// resourceOfType is the resource whose objects have GraphQL type name.
func (e *Executable) resourceOfType(name string) *schema.Resource {
	e.typesOnce.Do(func() {
		e.byType = map[string]*schema.Resource{}
		e.typeMeta = map[string]typeMeta{}
		for _, r := range e.Model.Resources {
			if _, ok := e.byType[r.TypeName]; !ok {
				e.byType[r.TypeName] = r
				k, _ := json.Marshal(r.Kind)
				av, _ := json.Marshal(r.GroupVersion())
				e.typeMeta[r.TypeName] = typeMeta{kind: k, apiVersion: av}
			}
		}
	})
	return e.byType[name]
}

// typeMetaOf is the kind and apiVersion of the resource type name.
func (e *Executable) typeMetaOf(name string) (typeMeta, bool) {
	if e.resourceOfType(name) == nil {
		return typeMeta{}, false
	}
	tm, ok := e.typeMeta[name]
	return tm, ok
}

var _ graphql.ExecutableSchema = (*Executable)(nil)

// Schema returns the generated schema.
func (e *Executable) Schema() *ast.Schema { return e.Model.Schema }

// Complexity uses gqlgen's default (1 per field plus its children), except
// that a list counts its children by the limit asked for (at least 1).
func (e *Executable) Complexity(_ context.Context, typeName, field string, child int, args map[string]any) (int, bool) {
	f := e.Model.Fields[typeName][field]
	if f != nil && f.Kind == schema.List {
		n := int64(10)
		if l, ok := args["limit"].(int64); ok && l > 0 {
			n = l
		}
		if n > 100 {
			n = 100
		}
		return 1 + child*int(n), true
	}
	return 0, false
}

// Exec runs the operation in ctx.
func (e *Executable) Exec(ctx context.Context) graphql.ResponseHandler {
	oc := graphql.GetOperationContext(ctx)
	caller, _ := CallerFrom(ctx)
	r := &run{e: e, oc: oc, caller: caller}
	switch oc.Operation.Operation {
	case ast.Subscription:
		if !caller.Streaming {
			// gqlgen would answer a plain POST with the first event only.
			return graphql.OneShot(graphql.ErrorResponse(ctx, "a subscription needs a stream: a websocket (graphql-transport-ws) or server-sent events (Accept: text/event-stream)"))
		}
		return r.subscribe(ctx)
	default:
		root := "Query"
		if oc.Operation.Operation == ast.Mutation {
			root = "Mutation"
		}
		var buf bytes.Buffer
		// Sized like the last answer of this schema, to spare the copies
		// of a growing buffer.
		buf.Grow(min(int(e.lastSize.Load()), 4<<20))
		r.object(ctx, &buf, root, oc.Operation.SelectionSet, struct{}{}, nil)
		// The answer is written: the core's answers may go back to the pool.
		for _, b := range r.bodies {
			b.Release()
		}
		e.lastSize.Store(int64(buf.Len()))
		return graphql.OneShot(&graphql.Response{Data: buf.Bytes(), Errors: r.errs})
	}
}

type run struct {
	e      *Executable
	oc     *graphql.OperationContext
	caller Caller
	errs   gqlerror.List
	// indexes of the core's list answers this operation read.
	indexes []*jsonIndex
	// bodies are those answers' pooled buffers, released once the
	// operation's answer is written.
	bodies []*kube.Body
	// ns is the namespace (a string) or the raw metadata of the innermost
	// object being written, for relations.
	ns any
	// slab holds path nodes, allocated in chunks.
	slab []pathNode
	// plans are the collected fields by selection and type.
	plans map[planKey][]fieldPlan
}

// fieldPlan is one collected field of a selection on a type, with its
// definition and how to resolve it.
type fieldPlan struct {
	f    graphql.CollectedField
	fd   *ast.FieldDefinition
	info *schema.Field
}

type planKey struct {
	sel      *ast.Selection
	n        int
	typeName string
}

// plan collects the fields of sel on typeName once per operation: the
// items of a list share their selection, so the collecting and the
// lookups are not repeated for each.
func (r *run) plan(sel ast.SelectionSet, typeName string, def *ast.Definition) []fieldPlan {
	key := planKey{n: len(sel), typeName: typeName}
	if len(sel) > 0 {
		key.sel = &sel[0]
		if p, ok := r.plans[key]; ok {
			return p
		}
	}
	fields := graphql.CollectFields(r.oc, sel, []string{typeName, schema.UnionObject})
	out := make([]fieldPlan, len(fields))
	for i, f := range fields {
		out[i].f = f
		if def != nil {
			out[i].fd = def.Fields.ForName(f.Name)
		}
		out[i].info = r.e.Model.Fields[typeName][f.Name]
	}
	if key.sel != nil {
		if r.plans == nil {
			r.plans = map[planKey][]fieldPlan{}
		}
		r.plans[key] = out
	}
	return out
}

// node returns a path node (name for a field, else index in a list).
func (r *run) node(parent *pathNode, name string, index int) *pathNode {
	if len(r.slab) == cap(r.slab) {
		r.slab = make([]pathNode, 0, 256)
	}
	r.slab = append(r.slab, pathNode{parent: parent, name: name, index: index})
	return &r.slab[len(r.slab)-1]
}

// indexOf is the index of the answer b is part of (nil when none).
func (r *run) indexOf(b []byte) *jsonIndex {
	for _, x := range r.indexes {
		if x.contains(b) {
			return x
		}
	}
	return nil
}

// pathNode is a response path built only when an error needs it.
type pathNode struct {
	parent *pathNode
	name   string
	index  int
}

func (p *pathNode) path() ast.Path {
	if p == nil {
		return nil
	}
	out := p.parent.path()
	if p.name != "" {
		return append(out, ast.PathName(p.name))
	}
	return append(out, ast.PathIndex(p.index))
}

func (r *run) fail(path *pathNode, err error) {
	ge := &gqlerror.Error{Message: err.Error(), Path: path.path(), Extensions: extensionsOf(err)}
	r.errs = append(r.errs, ge)
}

// object writes the selection of an object value.
func (r *run) object(ctx context.Context, w *bytes.Buffer, typeName string, sel ast.SelectionSet, value any, path *pathNode) {
	def := r.e.Model.Schema.Types[typeName]
	if p, ok := value.(*json.RawMessage); ok {
		value = *p
	}
	prevNS := r.ns
	switch m := value.(type) {
	case json.RawMessage:
		// Objects of lists stay raw JSON until a selection needs them:
		// one level is decoded here, unselected fields never are.
		ro, ok := splitObject(m, r.indexOf(m))
		if !ok {
			w.WriteString("null")
			return
		}
		if ro.get("kind") == nil {
			if tm, ok := r.e.typeMetaOf(typeName); ok {
				ro = append(ro, rawField{"kind", tm.kind}, rawField{"apiVersion", tm.apiVersion})
			}
		}
		value = ro
		if md := ro.get("metadata"); md != nil {
			r.ns = md
		}
	case map[string]any:
		if md, ok := m["metadata"].(map[string]any); ok {
			if ns, ok := md["namespace"].(string); ok {
				r.ns = ns
			}
		}
	}
	fields := r.plan(sel, typeName, def)
	w.WriteByte('{')
	for i, p := range fields {
		f := p.f
		if i > 0 {
			w.WriteByte(',')
		}
		writeString(w, f.Alias)
		w.WriteByte(':')
		fpath := r.node(path, f.Alias, 0)
		if f.Name == "__typename" {
			writeString(w, typeName)
			continue
		}
		if strings.HasPrefix(typeName, "__") {
			v, err := introField(r.e.Model.Schema, value, f.Name, f.ArgumentMap(r.oc.Variables))
			if err != nil {
				r.fail(fpath, err)
				w.WriteString("null")
				continue
			}
			fd := def.Fields.ForName(f.Name)
			r.value(ctx, w, fd.Type, f.Selections, v, fpath)
			continue
		}
		if typeName == "Query" && (f.Name == "__schema" || f.Name == "__type") {
			v, err := introRoot(r.e.Model.Schema, f.Name, f.ArgumentMap(r.oc.Variables))
			if err != nil {
				r.fail(fpath, err)
				w.WriteString("null")
				continue
			}
			r.value(ctx, w, &ast.Type{NamedType: map[string]string{"__schema": "__Schema", "__type": "__Type"}[f.Name]}, f.Selections, v, fpath)
			continue
		}
		fd, info := p.fd, p.info
		if fd == nil || info == nil {
			r.fail(fpath, fmt.Errorf("field %s.%s cannot be resolved", typeName, f.Name))
			w.WriteString("null")
			continue
		}
		v, err := r.resolve(ctx, info, f, value)
		if err != nil {
			r.fail(fpath, err)
			w.WriteString("null")
			continue
		}
		r.value(ctx, w, fd.Type, f.Selections, v, fpath)
	}
	w.WriteByte('}')
	r.ns = prevNS
}

// value writes v as typ.
func (r *run) value(ctx context.Context, w *bytes.Buffer, typ *ast.Type, sel ast.SelectionSet, v any, path *pathNode) {
	if v == nil {
		w.WriteString("null")
		return
	}
	var raw json.RawMessage
	isRaw := false
	switch x := v.(type) {
	case *protoItems:
		r.writeProtoItems(ctx, w, typ, sel, x, path)
		return
	case json.RawMessage:
		raw, isRaw = x, true
	case *json.RawMessage:
		// A member of a split object, by pointer: no copy of its slice
		// header into an interface.
		raw, isRaw = *x, true
	}
	if isRaw {
		if len(raw) == 0 || string(raw) == "null" {
			w.WriteString("null")
			return
		}
		if typ.Elem != nil {
			items, ok := splitArray(raw, r.indexOf(raw))
			if !ok {
				w.WriteString("null")
				return
			}
			v = items
		} else if def := r.e.Model.Schema.Types[typ.NamedType]; def != nil && def.Kind != ast.Object {
			switch {
			case def.Name == "String" && raw[0] != '"':
				writeString(w, string(raw))
			case def.Name == "Int" && bytes.ContainsAny(raw, ".eE"):
				f, _ := strconv.ParseFloat(string(raw), 64)
				w.WriteString(strconv.FormatInt(int64(f), 10))
			default:
				w.Write(raw)
			}
			return
		} else if raw[0] != '{' {
			w.WriteString("null")
			return
		}
	}
	if typ.Elem != nil {
		if items, ok := v.([]json.RawMessage); ok {
			w.WriteByte('[')
			for i := range items {
				if i > 0 {
					w.WriteByte(',')
				}
				r.value(ctx, w, typ.Elem, sel, &items[i], r.node(path, "", i))
			}
			w.WriteByte(']')
			return
		}
		list, ok := v.([]any)
		if !ok {
			w.WriteString("null")
			return
		}
		w.WriteByte('[')
		for i, item := range list {
			if i > 0 {
				w.WriteByte(',')
			}
			r.value(ctx, w, typ.Elem, sel, item, r.node(path, "", i))
		}
		w.WriteByte(']')
		return
	}
	def := r.e.Model.Schema.Types[typ.NamedType]
	if def == nil {
		w.WriteString("null")
		return
	}
	switch def.Kind {
	case ast.Union:
		concrete := r.concreteType(v)
		if concrete == "" {
			w.WriteString("null")
			return
		}
		r.object(ctx, w, concrete, sel, v, path)
	case ast.Object:
		if !strings.HasPrefix(def.Name, "__") {
			switch v.(type) {
			case map[string]any, struct{}, json.RawMessage, *json.RawMessage, rawObject:
			default:
				w.WriteString("null")
				return
			}
		}
		r.object(ctx, w, def.Name, sel, v, path)
	default:
		switch def.Name {
		case "String":
			if _, ok := v.(string); !ok {
				b, _ := json.Marshal(v)
				writeString(w, string(b))
				return
			}
		case "Int":
			if f, ok := v.(float64); ok {
				w.WriteString(strconv.FormatInt(int64(f), 10))
				return
			}
		}
		writeJSON(w, v)
	}
}

// writeJSON writes a decoded JSON value without reflection for the types
// encoding/json decodes into.
func writeJSON(w *bytes.Buffer, v any) {
	switch x := v.(type) {
	case nil:
		w.WriteString("null")
	case string:
		writeString(w, x)
	case bool:
		if x {
			w.WriteString("true")
		} else {
			w.WriteString("false")
		}
	case float64:
		if x == float64(int64(x)) && x < 1e15 && x > -1e15 {
			w.WriteString(strconv.FormatInt(int64(x), 10))
		} else {
			w.WriteString(strconv.FormatFloat(x, 'g', -1, 64))
		}
	case int64:
		w.WriteString(strconv.FormatInt(x, 10))
	case []any:
		w.WriteByte('[')
		for i, it := range x {
			if i > 0 {
				w.WriteByte(',')
			}
			writeJSON(w, it)
		}
		w.WriteByte(']')
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		w.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				w.WriteByte(',')
			}
			writeString(w, k)
			w.WriteByte(':')
			writeJSON(w, x[k])
		}
		w.WriteByte('}')
	default:
		b, err := json.Marshal(v)
		if err != nil {
			w.WriteString("null")
			return
		}
		w.Write(b)
	}
}

// writeString writes s as a JSON string (HTML-safe like encoding/json).
func writeString(w *bytes.Buffer, s string) {
	simple := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' || c >= 0x80 {
			simple = false
			break
		}
	}
	if simple {
		w.WriteByte('"')
		w.WriteString(s)
		w.WriteByte('"')
		return
	}
	b, _ := json.Marshal(s)
	w.Write(b)
}

func str(args map[string]any, k string) string {
	s, _ := args[k].(string)
	return s
}

func boolArg(args map[string]any, k string) bool {
	b, _ := args[k].(bool)
	return b
}

// resolve produces the Go value of one field.
func (r *run) resolve(ctx context.Context, info *schema.Field, f graphql.CollectedField, parent any) (any, error) {
	switch info.Kind {
	case schema.Namespace:
		return struct{}{}, nil
	case schema.Property:
		switch m := parent.(type) {
		case map[string]any:
			return m[info.JSON], nil
		case rawObject:
			if p := m.ref(info.JSON); p != nil && len(*p) > 0 && string(*p) != "null" {
				return p, nil
			}
		}
		return nil, nil
	case schema.Relation:
		return r.relation(ctx, info.Relation, parent)
	}
	res := info.Resource
	args := f.ArgumentMap(r.oc.Variables)
	ns := str(args, "namespace")
	if !res.Namespaced {
		ns = ""
	}
	ws, token := r.caller.Workspace, r.caller.Token
	dry := url.Values{}
	if boolArg(args, "dryRun") {
		dry.Set("dryRun", "All")
	}
	switch info.Kind {
	case schema.List:
		q := url.Values{}
		for arg, param := range map[string]string{"labelselector": "labelSelector", "fieldselector": "fieldSelector", "continue": "continue"} {
			if v := str(args, arg); v != "" {
				q.Set(param, v)
			}
		}
		if l, ok := args["limit"].(int64); ok && l > 0 {
			q.Set("limit", fmt.Sprint(l))
		}
		sortBy := str(args, "sortBy")
		body, direct, err := r.listRequest(ctx, res, kube.Request{Method: "GET", Path: kube.ResourcePath(ws, res.Group, res.Version, res.Resource, ns, ""), Query: q}, f, sortBy)
		if err != nil {
			return nil, err
		}
		r.bodies = append(r.bodies, body)
		if direct != nil {
			out := map[string]any{"items": &protoItems{direct}, "continue": direct.Continue, "resourceVersion": direct.ResourceVersion}
			if direct.RemainingItemCount != nil {
				out["remainingItemCount"] = *direct.RemainingItemCount
			}
			return out, nil
		}
		b := body.Bytes()
		var list struct {
			Metadata struct {
				Continue           string `json:"continue"`
				ResourceVersion    string `json:"resourceVersion"`
				RemainingItemCount *int64 `json:"remainingItemCount"`
			} `json:"metadata"`
			Items    []any             `json:"-"`
			RawItems []json.RawMessage `json:"items"`
		}
		x := indexJSON(b)
		if x != nil {
			r.indexes = append(r.indexes, x)
		}
		top, ok := splitObject(b, x)
		if !ok {
			return nil, fmt.Errorf("decoding the list of %s: not a JSON object", res.Resource)
		}
		if md := top.get("metadata"); md != nil {
			if err := json.Unmarshal(md, &list.Metadata); err != nil {
				return nil, fmt.Errorf("decoding the list of %s: %w", res.Resource, err)
			}
		}
		if items := top.get("items"); items != nil && string(items) != "null" {
			if list.RawItems, ok = splitArray(items, x); !ok {
				return nil, fmt.Errorf("decoding the items of %s: not a JSON array", res.Resource)
			}
		}
		if sortBy == "" {
			// Decoded only as far as the selection reaches.
			items := list.RawItems
			if items == nil {
				items = []json.RawMessage{}
			}
			out := map[string]any{"items": items, "continue": list.Metadata.Continue, "resourceVersion": list.Metadata.ResourceVersion}
			if list.Metadata.RemainingItemCount != nil {
				out["remainingItemCount"] = *list.Metadata.RemainingItemCount
			}
			return out, nil
		}
		list.Items = make([]any, len(list.RawItems))
		for i, raw := range list.RawItems {
			var it any
			if err := json.Unmarshal(raw, &it); err != nil {
				return nil, fmt.Errorf("decoding the list of %s: %w", res.Resource, err)
			}
			list.Items[i] = it
		}
		for _, it := range list.Items {
			if m, ok := it.(map[string]any); ok {
				if _, ok := m["kind"]; !ok {
					m["kind"] = res.Kind
					m["apiVersion"] = res.GroupVersion()
				}
			}
		}
		if list.Items == nil {
			list.Items = []any{}
		}
		if sb := str(args, "sortBy"); sb != "" {
			sortItems(list.Items, sb)
		}
		out := map[string]any{"items": list.Items, "continue": list.Metadata.Continue, "resourceVersion": list.Metadata.ResourceVersion}
		if list.Metadata.RemainingItemCount != nil {
			out["remainingItemCount"] = *list.Metadata.RemainingItemCount
		}
		return out, nil
	case schema.Get, schema.YAML:
		if res.Namespaced && ns == "" {
			ns = "default"
		}
		obj, err := r.get(ctx, res, ns, str(args, "name"))
		if err != nil || obj == nil {
			return nil, err
		}
		if info.Kind == schema.YAML {
			b, _ := json.Marshal(obj)
			y, err := yaml.JSONToYAML(b)
			if err != nil {
				return nil, err
			}
			return string(y), nil
		}
		return obj, nil
	case schema.Create, schema.Update, schema.Apply:
		obj, _ := r.input(r.objectArgType(f), args["object"]).(map[string]any)
		if obj == nil {
			obj = map[string]any{}
		}
		md, _ := obj["metadata"].(map[string]any)
		if md == nil {
			md = map[string]any{}
			obj["metadata"] = md
		}
		if res.Namespaced && ns == "" {
			ns, _ = md["namespace"].(string)
			if ns == "" {
				ns = "default"
			}
		}
		name := str(args, "name")
		req := kube.Request{Query: dry}
		switch info.Kind {
		case schema.Create:
			obj["apiVersion"], obj["kind"] = res.GroupVersion(), res.Kind
			req.Method, req.ContentType = "POST", "application/json"
			req.Path = kube.ResourcePath(ws, res.Group, res.Version, res.Resource, ns, "")
		case schema.Update:
			req.Method, req.ContentType = "PATCH", "application/merge-patch+json"
			req.Path = kube.ResourcePath(ws, res.Group, res.Version, res.Resource, ns, name)
		case schema.Apply:
			obj["apiVersion"], obj["kind"] = res.GroupVersion(), res.Kind
			md["name"] = name
			if ns != "" {
				md["namespace"] = ns
			}
			req.Method, req.ContentType = "PATCH", "application/apply-patch+yaml"
			req.Path = kube.ResourcePath(ws, res.Group, res.Version, res.Resource, ns, name)
			req.Query.Set("fieldManager", str(args, "fieldManager"))
			if boolArg(args, "force") {
				req.Query.Set("force", "true")
			}
		}
		body, err := json.Marshal(obj)
		if err != nil {
			return nil, err
		}
		req.Body = body
		b, err := r.e.Kube.Do(ctx, token, req)
		if err != nil {
			return nil, err
		}
		var out map[string]any
		if err := json.Unmarshal(b, &out); err != nil {
			return nil, err
		}
		return out, nil
	case schema.Delete:
		if res.Namespaced && ns == "" {
			ns = "default"
		}
		_, err := r.e.Kube.Do(ctx, token, kube.Request{Method: "DELETE", Query: dry, Path: kube.ResourcePath(ws, res.Group, res.Version, res.Resource, ns, str(args, "name"))})
		if err != nil {
			return nil, err
		}
		return true, nil
	}
	return nil, fmt.Errorf("field %s cannot be resolved here", f.Name)
}

func (r *run) get(ctx context.Context, res *schema.Resource, ns, name string) (map[string]any, error) {
	b, err := r.e.Kube.Do(ctx, r.caller.Token, kube.Request{Method: "GET", Path: kube.ResourcePath(r.caller.Workspace, res.Group, res.Version, res.Resource, ns, name)})
	if kube.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var obj map[string]any
	if err := json.Unmarshal(b, &obj); err != nil {
		return nil, err
	}
	return obj, nil
}

func (r *run) objectArgType(f graphql.CollectedField) *ast.Type {
	if f.Definition != nil {
		if a := f.Definition.Arguments.ForName("object"); a != nil {
			return a.Type
		}
	}
	return nil
}

// input turns an input value keyed by GraphQL field names into JSON keyed
// by the API's property names.
func (r *run) input(typ *ast.Type, v any) any {
	if typ == nil || v == nil {
		return v
	}
	if typ.Elem != nil {
		list, ok := v.([]any)
		if !ok {
			return v
		}
		out := make([]any, len(list))
		for i, it := range list {
			out[i] = r.input(typ.Elem, it)
		}
		return out
	}
	def := r.e.Model.Schema.Types[typ.NamedType]
	m, ok := v.(map[string]any)
	if def == nil || def.Kind != ast.InputObject || !ok {
		return v
	}
	names := r.e.Model.InputFields[def.Name]
	out := make(map[string]any, len(m))
	for k, val := range m {
		jsonName := names[k]
		if jsonName == "" {
			jsonName = k
		}
		var ft *ast.Type
		if fd := def.Fields.ForName(k); fd != nil {
			ft = fd.Type
		}
		out[jsonName] = r.input(ft, val)
	}
	return out
}

// relation follows ownerReferences or a *Ref one level.
func (r *run) relation(ctx context.Context, rel *schema.RelationInfo, parent any) (any, error) {
	if ro, ok := parent.(rawObject); ok {
		b, _ := json.Marshal(ro)
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		parent = m
	}
	obj, ok := parent.(map[string]any)
	if !ok {
		return nil, nil
	}
	md, _ := obj["metadata"].(map[string]any)
	// The namespace of the object the reference sits in (set by object).
	var ns string
	switch v := r.ns.(type) {
	case string:
		ns = v
	case json.RawMessage:
		var m struct {
			Namespace string `json:"namespace"`
		}
		_ = json.Unmarshal(v, &m)
		ns = m.Namespace
	}
	if rel.Owners {
		refs, _ := md["ownerReferences"].([]any)
		out := []any{}
		for _, ref := range refs {
			m, _ := ref.(map[string]any)
			av, _ := m["apiVersion"].(string)
			kind, _ := m["kind"].(string)
			name, _ := m["name"].(string)
			res := r.e.Model.ByKind[av+"/"+kind]
			if res == nil {
				out = append(out, nil)
				continue
			}
			rns := ns
			if !res.Namespaced {
				rns = ""
			}
			o, err := r.get(ctx, res, rns, name)
			if err != nil {
				out = append(out, nil)
				continue
			}
			out = append(out, o)
		}
		return out, nil
	}
	ref, _ := obj[rel.Ref].(map[string]any)
	if ref == nil {
		// A *Ref may sit in spec.
		if spec, ok := obj["spec"].(map[string]any); ok {
			ref, _ = spec[rel.Ref].(map[string]any)
		}
	}
	name, _ := ref["name"].(string)
	if name == "" {
		return nil, nil
	}
	if n, ok := ref["namespace"].(string); ok && n != "" {
		ns = n
	}
	if !rel.Target.Namespaced {
		ns = ""
	}
	return r.get(ctx, rel.Target, ns, name)
}

// sortItems sorts one page by a dotted JSON path, strings and numbers in
// their natural order, missing values last.
func sortItems(items []any, path string) {
	parts := strings.Split(path, ".")
	key := func(v any) any {
		for _, p := range parts {
			m, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			v = m[p]
		}
		return v
	}
	sort.SliceStable(items, func(i, j int) bool {
		a, b := key(items[i]), key(items[j])
		switch av := a.(type) {
		case string:
			bv, ok := b.(string)
			return !ok || av < bv
		case float64:
			bv, ok := b.(float64)
			return !ok || av < bv
		case nil:
			return false
		}
		return b == nil
	})
}
