package schema

import (
	"fmt"
	"sort"
	"strings"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/validator"
)

// Resource is one API resource of a workspace, from discovery.
type Resource struct {
	Group, Version, Resource, Kind string
	Namespaced                     bool
	Verbs                          []string

	// TypeName is the GraphQL object type of one object.
	TypeName string
}

// Can reports whether the resource supports verb.
func (r *Resource) Can(verb string) bool {
	for _, v := range r.Verbs {
		if v == verb {
			return true
		}
	}
	return false
}

// GroupVersion is "v1" for the core group, else "group/version".
func (r *Resource) GroupVersion() string {
	if r.Group == "" {
		return r.Version
	}
	return r.Group + "/" + r.Version
}

// Input is what a schema is generated from.
type Input struct {
	Resources []*Resource
	// Docs are the OpenAPI v3 documents by group-version ("v1", "apps/v1").
	Docs map[string]*Document
}

// FieldKind says how the executor resolves a field.
type FieldKind int

const (
	// Property reads JSON property Field.JSON of the parent value.
	Property FieldKind = iota
	// Namespace is a group or version level: it only holds more fields.
	Namespace
	List
	Get
	YAML
	Create
	Update
	Apply
	Delete
	Subscribe
	// Relation follows a reference (Field.Relation) to another object.
	Relation
)

// Field tells the executor how to resolve one field of one type.
type Field struct {
	Kind     FieldKind
	JSON     string
	Resource *Resource
	Relation *RelationInfo
}

// RelationInfo describes a field that follows a reference: an
// ownerReference list (Owners) or a *Ref{name} object at JSON property Ref.
type RelationInfo struct {
	Owners bool
	Ref    string
	// Target is the resource a *Ref points to (nil for owners: they are
	// resolved through their apiVersion and kind).
	Target *Resource
}

// Model is a generated schema with the tables the executor needs.
type Model struct {
	Schema *ast.Schema
	// Fields[type][field] for every object type's non-introspection field.
	Fields map[string]map[string]*Field
	// InputFields[inputType][field] is the JSON property of an input field.
	InputFields map[string]map[string]string
	// ByKind finds a resource by "apiVersion/Kind" (for ownerReferences).
	ByKind    map[string]*Resource
	Resources []*Resource
}

// Scalars the generator adds to the prelude.
const (
	ScalarJSON        = "JSON"
	ScalarStringMap   = "StringMap"
	ScalarQuantity    = "Quantity"
	ScalarIntOrString = "IntOrString"
	// UnionObject is the union of every resource's object type: what an
	// ownerReference may point to.
	UnionObject = "KubernetesObject"
)

var scalarDocs = map[string]string{
	ScalarJSON:        "Any JSON value, passed through unchanged.",
	ScalarStringMap:   "A map from strings to strings, as a JSON object.",
	ScalarQuantity:    "A Kubernetes resource quantity such as \"100m\" or \"1Gi\" (a string, or a number on input).",
	ScalarIntOrString: "A Kubernetes int-or-string: an integer or a string such as a port name or \"25%\".",
}

// special maps well-known component names to scalars.
var special = map[string]string{
	"io.k8s.apimachinery.pkg.api.resource.Quantity":                                         ScalarQuantity,
	"io.k8s.apimachinery.pkg.util.intstr.IntOrString":                                       ScalarIntOrString,
	"io.k8s.apimachinery.pkg.apis.meta.v1.Time":                                             "String",
	"io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime":                                        "String",
	"io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1":                                         ScalarJSON,
	"io.k8s.apimachinery.pkg.runtime.RawExtension":                                          ScalarJSON,
	"io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON":                         ScalarJSON,
	"io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps":              ScalarJSON,
	"io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrArray":       ScalarJSON,
	"io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrBool":        ScalarJSON,
	"io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrStringArray": ScalarJSON,
}

type builder struct {
	in         *Input
	components map[string]*Schema
	typeNames  nameSet
	// named[component] is the object type name given to a component.
	named    map[string]string
	outDone  map[string]bool
	inDone   map[string]bool
	defs     []*ast.Definition
	model    *Model
	resource map[string]*Resource // "group/Kind" -> resource, for *Ref relations
}

// Build generates the schema of one workspace. The same input always gives
// the same schema.
func Build(in *Input) (*Model, error) {
	b := &builder{
		in:         in,
		components: map[string]*Schema{},
		typeNames:  nameSet{},
		named:      map[string]string{},
		outDone:    map[string]bool{},
		inDone:     map[string]bool{},
		resource:   map[string]*Resource{},
		model: &Model{
			Fields:      map[string]map[string]*Field{},
			InputFields: map[string]map[string]string{},
			ByKind:      map[string]*Resource{},
		},
	}
	prelude := validator.PreludeDocument()
	for _, d := range prelude.Definitions {
		b.typeNames[d.Name] = true
	}
	for _, n := range []string{"Query", "Mutation", "Subscription", "EventType", ScalarJSON, ScalarStringMap, ScalarQuantity, ScalarIntOrString, UnionObject} {
		b.typeNames[n] = true
	}
	gvs := make([]string, 0, len(in.Docs))
	for gv := range in.Docs {
		gvs = append(gvs, gv)
	}
	sort.Strings(gvs)
	gvkToComponent := map[string]string{}
	for _, gv := range gvs {
		for name, s := range in.Docs[gv].Components.Schemas {
			if _, ok := b.components[name]; !ok {
				b.components[name] = s
			}
			for _, g := range s.GVK {
				gvkToComponent[g.Group+"/"+g.Version+"/"+g.Kind] = name
			}
		}
	}

	// The resources that get fields: top-level ones with a schema.
	var resources []*Resource
	roots := map[*Resource]string{}
	for _, r := range in.Resources {
		if strings.Contains(r.Resource, "/") {
			continue
		}
		comp, ok := gvkToComponent[r.Group+"/"+r.Version+"/"+r.Kind]
		if !ok {
			continue
		}
		resources = append(resources, r)
		roots[r] = comp
	}
	sort.Slice(resources, func(i, j int) bool {
		a, c := resources[i], resources[j]
		if a.Group != c.Group {
			return a.Group < c.Group
		}
		if a.Version != c.Version {
			return a.Version < c.Version
		}
		return a.Resource < c.Resource
	})

	// Name every reachable component up front, in rank order, so that
	// names do not depend on the order types are reached in.
	reach := map[string]bool{}
	for _, r := range resources {
		b.reach(roots[r], reach)
	}
	comps := make([]string, 0, len(reach))
	for c := range reach {
		comps = append(comps, c)
	}
	sort.Slice(comps, func(i, j int) bool {
		ri, rj := rank(comps[i]), rank(comps[j])
		if ri != rj {
			return ri < rj
		}
		return comps[i] < comps[j]
	})
	for _, c := range comps {
		if !b.isObject(c) {
			continue
		}
		parts := strings.Split(c, ".")
		name := ""
		for k := 1; k <= len(parts); k++ {
			cand := Pascal(strings.Join(parts[len(parts)-k:], "."))
			if b.typeNames.free(cand) {
				name = cand
				break
			}
		}
		if name == "" {
			name = Pascal(c)
		}
		b.named[c] = b.typeNames.take(name)
	}
	// A resource whose schema is no object (nothing to select) is left out.
	kept := resources[:0]
	for _, r := range resources {
		if b.named[roots[r]] != "" {
			kept = append(kept, r)
		}
	}
	resources = kept
	for _, r := range resources {
		r.TypeName = b.named[roots[r]]
		b.model.ByKind[r.GroupVersion()+"/"+r.Kind] = r
		if _, ok := b.resource[r.Group+"/"+r.Kind]; !ok {
			b.resource[r.Group+"/"+r.Kind] = r
		}
	}
	b.model.Resources = resources
	for _, r := range resources {
		b.outputObject(roots[r])
	}
	b.roots(resources)
	if len(resources) > 0 {
		seen := map[string]bool{}
		var members []string
		for _, r := range resources {
			if !seen[r.TypeName] {
				seen[r.TypeName] = true
				members = append(members, r.TypeName)
			}
		}
		sort.Strings(members)
		b.defs = append(b.defs, &ast.Definition{Kind: ast.Union, Name: UnionObject, Types: members,
			Description: "Any object of the workspace's APIs; select its fields with ... on <Type>."})
	}

	doc := &ast.SchemaDocument{}
	doc.Definitions = append(doc.Definitions, prelude.Definitions...)
	doc.Directives = append(doc.Directives, prelude.Directives...)
	for _, n := range []string{ScalarJSON, ScalarStringMap, ScalarQuantity, ScalarIntOrString} {
		doc.Definitions = append(doc.Definitions, &ast.Definition{Kind: ast.Scalar, Name: n, Description: scalarDocs[n]})
	}
	doc.Definitions = append(doc.Definitions, &ast.Definition{
		Kind: ast.Enum, Name: "EventType", Description: "The type of a watch event.",
		EnumValues: ast.EnumValueList{{Name: "ADDED"}, {Name: "MODIFIED"}, {Name: "DELETED"}},
	})
	doc.Definitions = append(doc.Definitions, b.defs...)
	s, err := validator.ValidateSchemaDocument(doc)
	if err != nil {
		return nil, fmt.Errorf("validating the generated schema: %w", err)
	}
	b.model.Schema = s
	return b.model, nil
}

// reach marks the components reachable from component c.
func (b *builder) reach(c string, seen map[string]bool) {
	if seen[c] || special[c] != "" {
		return
	}
	s := b.components[c]
	if s == nil {
		return
	}
	seen[c] = true
	b.reachSchema(s, seen)
}

func (b *builder) reachSchema(s *Schema, seen map[string]bool) {
	if s == nil {
		return
	}
	if t := s.target(); t != "" {
		b.reach(t, seen)
		return
	}
	for _, p := range s.Properties {
		b.reachSchema(p, seen)
	}
	b.reachSchema(s.Items, seen)
	if s.AdditionalProperties != nil {
		b.reachSchema(s.AdditionalProperties.Schema, seen)
	}
}

// isObject reports whether component c becomes an object type.
func (b *builder) isObject(c string) bool {
	if special[c] != "" {
		return false
	}
	s := b.components[c]
	return s != nil && len(s.Properties) > 0 && s.target() == ""
}

func sortedKeys(m map[string]*Schema) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// typeOf is the (nullable) GraphQL type of schema s; ctx names anonymous
// object and enum types found inside it.
func (b *builder) typeOf(s *Schema, ctx string, input bool) *ast.Type {
	if s == nil {
		return ast.NamedType(ScalarJSON, nil)
	}
	if t := s.target(); t != "" {
		if sc := special[t]; sc != "" {
			return ast.NamedType(sc, nil)
		}
		if b.isObject(t) {
			if input {
				return ast.NamedType(b.inputObject(t), nil)
			}
			return ast.NamedType(b.outputObject(t), nil)
		}
		target := b.components[t]
		if target == nil || target == s {
			return ast.NamedType(ScalarJSON, nil)
		}
		return b.typeOf(target, ctx, input)
	}
	if s.IntOrString || s.Format == "int-or-string" {
		return ast.NamedType(ScalarIntOrString, nil)
	}
	if len(s.OneOf) > 0 || len(s.AnyOf) > 0 {
		return ast.NamedType(ScalarJSON, nil)
	}
	switch s.Type {
	case "string":
		if e := b.enum(s, ctx); e != "" {
			return ast.NamedType(e, nil)
		}
		return ast.NamedType("String", nil)
	case "integer":
		return ast.NamedType("Int", nil)
	case "number":
		return ast.NamedType("Float", nil)
	case "boolean":
		return ast.NamedType("Boolean", nil)
	case "array":
		return ast.ListType(b.typeOf(s.Items, ctx+"Item", input), nil)
	}
	if len(s.Properties) > 0 && !s.EmbeddedResource {
		return ast.NamedType(b.anonymous(s, ctx, input), nil)
	}
	if ap := s.AdditionalProperties; ap != nil && ap.Schema != nil && ap.Schema.Type == "string" && len(ap.Schema.Enum) == 0 && ap.Schema.target() == "" {
		return ast.NamedType(ScalarStringMap, nil)
	}
	return ast.NamedType(ScalarJSON, nil)
}

// enum makes an enum type for a string schema with an enum whose values
// are all valid GraphQL names; "" means the field stays a String.
func (b *builder) enum(s *Schema, ctx string) string {
	if len(s.Enum) == 0 {
		return ""
	}
	var vals ast.EnumValueList
	seen := map[string]bool{}
	for _, v := range s.Enum {
		str, ok := v.(string)
		if !ok || !validEnumValue(str) {
			return ""
		}
		if !seen[str] {
			seen[str] = true
			vals = append(vals, &ast.EnumValueDefinition{Name: str})
		}
	}
	name := b.typeNames.take(ctx)
	b.defs = append(b.defs, &ast.Definition{Kind: ast.Enum, Name: name, Description: s.Description, EnumValues: vals})
	return name
}

// outputObject defines the object type of component c once.
func (b *builder) outputObject(c string) string {
	name := b.named[c]
	if b.outDone[c] {
		return name
	}
	b.outDone[c] = true
	b.defineObject(name, b.components[c], false)
	return name
}

// inputObject defines the input type of component c once.
func (b *builder) inputObject(c string) string {
	key := c
	if b.inDone[key] {
		return b.named[c] + "Input"
	}
	b.inDone[key] = true
	name := b.named[c] + "Input"
	b.typeNames[name] = true
	b.defineObject(name, b.components[c], true)
	return name
}

func (b *builder) anonymous(s *Schema, ctx string, input bool) string {
	name := ctx
	if input {
		name += "Input"
	}
	name = b.typeNames.take(name)
	b.defineObject(name, s, input)
	return name
}

func (b *builder) defineObject(name string, s *Schema, input bool) {
	def := &ast.Definition{Kind: ast.Object, Name: name, Description: s.Description}
	if input {
		def.Kind = ast.InputObject
	}
	b.defs = append(b.defs, def)
	fields := nameSet{}
	table := map[string]*Field{}
	inTable := map[string]string{}
	ctxBase := strings.TrimSuffix(name, "Input")
	for _, prop := range sortedKeys(s.Properties) {
		ps := s.Properties[prop]
		fname := fields.take(Sanitize(prop))
		typ := b.typeOf(ps, ctxBase+Pascal(prop), input)
		def.Fields = append(def.Fields, &ast.FieldDefinition{Name: fname, Type: typ, Description: ps.Description})
		if input {
			inTable[fname] = prop
		} else {
			table[fname] = &Field{Kind: Property, JSON: prop}
		}
	}
	if input {
		b.model.InputFields[name] = inTable
		return
	}
	b.relations(def, s, fields, table)
	b.model.Fields[name] = table
}

// relations adds fields that follow references one level: "owners" next
// to metadata-bearing objects, and "<x>" next to every "<x>Ref" property
// whose object has a name (and no namespace different from the parent's).
func (b *builder) relations(def *ast.Definition, s *Schema, fields nameSet, table map[string]*Field) {
	if md, ok := s.Properties["metadata"]; ok && md.target() == "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta" {
		if _, hasKind := s.Properties["kind"]; hasKind && fields.free("owners") {
			fname := fields.take("owners")
			def.Fields = append(def.Fields, &ast.FieldDefinition{
				Name: fname, Type: ast.ListType(ast.NamedType(UnionObject, nil), nil),
				Description: "The objects named by metadata.ownerReferences (one level; null where the caller may not read one or its API is not served here).",
			})
			table[fname] = &Field{Kind: Relation, Relation: &RelationInfo{Owners: true}}
		}
	}
	for _, prop := range sortedKeys(s.Properties) {
		if !strings.HasSuffix(prop, "Ref") || len(prop) <= 3 {
			continue
		}
		ps := s.Properties[prop]
		obj := ps
		if t := ps.target(); t != "" {
			obj = b.components[t]
		}
		if obj == nil || obj.Properties["name"] == nil {
			continue
		}
		kind := Pascal(strings.TrimSuffix(prop, "Ref"))
		target := b.findKind(kind)
		if target == nil || target.TypeName == "" {
			continue
		}
		fname := Sanitize(strings.TrimSuffix(prop, "Ref"))
		if !fields.free(fname) {
			continue
		}
		fields.take(fname)
		def.Fields = append(def.Fields, &ast.FieldDefinition{
			Name: fname, Type: ast.NamedType(target.TypeName, nil),
			Description: fmt.Sprintf("The %s that %s names (in the parent object's namespace).", target.Kind, prop),
		})
		table[fname] = &Field{Kind: Relation, JSON: prop, Relation: &RelationInfo{Ref: prop, Target: target}}
	}
}

// findKind finds a resource of kind, preferring the core group.
func (b *builder) findKind(kind string) *Resource {
	if r, ok := b.resource["/"+kind]; ok {
		return r
	}
	var keys []string
	for k := range b.resource {
		if strings.HasSuffix(k, "/"+kind) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	if len(keys) == 0 {
		return nil
	}
	return b.resource[keys[0]]
}

// roots defines Query, Mutation and Subscription.
func (b *builder) roots(resources []*Resource) {
	query := &ast.Definition{Kind: ast.Object, Name: "Query", Description: "Every API of the workspace, by group and version."}
	mutation := &ast.Definition{Kind: ast.Object, Name: "Mutation", Description: "Create, update (merge patch), apply (server-side apply) and delete, by group and version."}
	sub := &ast.Definition{Kind: ast.Object, Name: "Subscription", Description: "Watch events per resource."}
	qTable, mTable, sTable := map[string]*Field{}, map[string]*Field{}, map[string]*Field{}
	qNames, mNames, sNames := nameSet{}, nameSet{}, nameSet{}

	type gvKey struct{ group, version string }
	byGV := map[gvKey][]*Resource{}
	var order []gvKey
	for _, r := range resources {
		k := gvKey{r.Group, r.Version}
		if _, ok := byGV[k]; !ok {
			order = append(order, k)
		}
		byGV[k] = append(byGV[k], r)
	}
	groupQ := map[string]*ast.Definition{}
	groupM := map[string]*ast.Definition{}
	for _, k := range order {
		prefix := "Core"
		if k.group != "" {
			prefix = Pascal(k.group)
		}
		vq := &ast.Definition{Kind: ast.Object, Name: b.typeNames.take(prefix + Pascal(k.version) + "Query")}
		vm := &ast.Definition{Kind: ast.Object, Name: b.typeNames.take(prefix + Pascal(k.version) + "Mutation")}
		vqt, vmt := map[string]*Field{}, map[string]*Field{}
		vqn, vmn := nameSet{}, nameSet{}
		for _, r := range byGV[k] {
			b.resourceFields(r, vq, vqt, vqn, vm, vmt, vmn)
			if r.Can("watch") {
				fname := Sanitize(k.version) + "_" + strings.ToLower(Sanitize(r.Resource))
				if k.group != "" {
					fname = Sanitize(k.group) + "_" + fname
				}
				fname = sNames.take(fname)
				sub.Fields = append(sub.Fields, &ast.FieldDefinition{
					Name: fname, Type: ast.NonNullNamedType(b.eventType(r), nil),
					Description: fmt.Sprintf("Watch events of %s (%s). Events after subscribing, or after resourceVersion when given.", r.Resource, r.GroupVersion()),
					Arguments:   b.args(r, "name", "labelselector", "fieldselector", "resourceVersion"),
				})
				sTable[fname] = &Field{Kind: Subscribe, Resource: r}
			}
		}
		hasQ := len(vq.Fields) > 0
		if hasQ {
			b.model.Fields[vq.Name] = vqt
			b.defs = append(b.defs, vq)
		}
		if len(vm.Fields) > 0 {
			b.model.Fields[vm.Name] = vmt
			b.defs = append(b.defs, vm)
		}
		vfield := Sanitize(k.version)
		if k.group == "" {
			// The core group's versions sit on the roots directly.
			if hasQ {
				qTable[qNames.take(vfield)] = &Field{Kind: Namespace}
				query.Fields = append(query.Fields, &ast.FieldDefinition{Name: vfield, Type: ast.NonNullNamedType(vq.Name, nil), Description: "The core API group, version " + k.version + "."})
			}
			if len(vm.Fields) > 0 {
				mTable[mNames.take(vfield)] = &Field{Kind: Namespace}
				mutation.Fields = append(mutation.Fields, &ast.FieldDefinition{Name: vfield, Type: ast.NonNullNamedType(vm.Name, nil)})
			}
			continue
		}
		gq, ok := groupQ[k.group]
		gfield := Sanitize(strings.ReplaceAll(k.group, ".", "_"))
		if !hasQ {
			ok = true
		} else if !ok {
			gq = &ast.Definition{Kind: ast.Object, Name: b.typeNames.take(Pascal(k.group) + "Query"), Description: "API group " + k.group + "."}
			groupQ[k.group] = gq
			b.defs = append(b.defs, gq)
			b.model.Fields[gq.Name] = map[string]*Field{}
			gfield = qNames.take(gfield)
			qTable[gfield] = &Field{Kind: Namespace}
			query.Fields = append(query.Fields, &ast.FieldDefinition{Name: gfield, Type: ast.NonNullNamedType(gq.Name, nil), Description: "API group " + k.group + "."})
		}
		if hasQ {
			gq.Fields = append(gq.Fields, &ast.FieldDefinition{Name: vfield, Type: ast.NonNullNamedType(vq.Name, nil)})
			b.model.Fields[gq.Name][vfield] = &Field{Kind: Namespace}
		}
		if len(vm.Fields) > 0 {
			gm, ok := groupM[k.group]
			if !ok {
				gm = &ast.Definition{Kind: ast.Object, Name: b.typeNames.take(Pascal(k.group) + "Mutation")}
				groupM[k.group] = gm
				b.defs = append(b.defs, gm)
				b.model.Fields[gm.Name] = map[string]*Field{}
				mf := mNames.take(Sanitize(strings.ReplaceAll(k.group, ".", "_")))
				mTable[mf] = &Field{Kind: Namespace}
				mutation.Fields = append(mutation.Fields, &ast.FieldDefinition{Name: mf, Type: ast.NonNullNamedType(gm.Name, nil)})
			}
			gm.Fields = append(gm.Fields, &ast.FieldDefinition{Name: vfield, Type: ast.NonNullNamedType(vm.Name, nil)})
			b.model.Fields[gm.Name][vfield] = &Field{Kind: Namespace}
		}
	}
	if len(query.Fields) == 0 {
		query.Fields = append(query.Fields, &ast.FieldDefinition{Name: "empty", Type: ast.NamedType("Boolean", nil), Description: "The workspace serves no APIs."})
		qTable["empty"] = &Field{Kind: Property, JSON: "empty"}
	}
	b.model.Fields["Query"] = qTable
	b.defs = append(b.defs, query)
	if len(mutation.Fields) > 0 {
		b.model.Fields["Mutation"] = mTable
		b.defs = append(b.defs, mutation)
	}
	if len(sub.Fields) > 0 {
		b.model.Fields["Subscription"] = sTable
		b.defs = append(b.defs, sub)
	}
}

func (b *builder) args(r *Resource, names ...string) ast.ArgumentDefinitionList {
	var out ast.ArgumentDefinitionList
	if r.Namespaced {
		out = append(out, &ast.ArgumentDefinition{Name: "namespace", Type: ast.NamedType("String", nil), Description: "The namespace; all namespaces when omitted (lists and watches), \"default\" otherwise."})
	}
	for _, n := range names {
		a := &ast.ArgumentDefinition{Name: n, Type: ast.NamedType("String", nil)}
		switch n {
		case "name!":
			a.Name, a.Type = "name", ast.NonNullNamedType("String", nil)
		case "limit":
			a.Type = ast.NamedType("Int", nil)
			a.Description = "At most this many items in one page (the server's own paging; continue fetches the next)."
		case "dryRun", "force":
			a.Type = ast.NamedType("Boolean", nil)
			a.DefaultValue = &ast.Value{Kind: ast.BooleanValue, Raw: "false"}
		case "fieldManager":
			a.DefaultValue = &ast.Value{Kind: ast.StringValue, Raw: "graphql-gateway"}
		case "sortBy":
			a.Description = "A dotted JSON path such as metadata.name; sorts the returned page only, not across pages."
		}
		out = append(out, a)
	}
	return out
}

func (b *builder) eventType(r *Resource) string {
	name := r.TypeName + "Event"
	if _, ok := b.model.Fields[name]; ok {
		return name
	}
	b.typeNames[name] = true
	b.defs = append(b.defs, &ast.Definition{Kind: ast.Object, Name: name, Fields: ast.FieldList{
		{Name: "type", Type: ast.NonNullNamedType("EventType", nil)},
		{Name: "object", Type: ast.NamedType(r.TypeName, nil)},
	}})
	b.model.Fields[name] = map[string]*Field{"type": {Kind: Property, JSON: "type"}, "object": {Kind: Property, JSON: "object"}}
	return name
}

func (b *builder) listType(r *Resource) string {
	name := r.TypeName + "List"
	if _, ok := b.model.Fields[name]; ok {
		return name
	}
	b.typeNames[name] = true
	b.defs = append(b.defs, &ast.Definition{Kind: ast.Object, Name: name, Fields: ast.FieldList{
		{Name: "items", Type: ast.NonNullListType(ast.NonNullNamedType(r.TypeName, nil), nil)},
		{Name: "continue", Type: ast.NamedType("String", nil), Description: "Pass as continue to get the next page; empty on the last page."},
		{Name: "resourceVersion", Type: ast.NamedType("String", nil)},
		{Name: "remainingItemCount", Type: ast.NamedType("Int", nil)},
	}})
	b.model.Fields[name] = map[string]*Field{
		"items": {Kind: Property, JSON: "items"}, "continue": {Kind: Property, JSON: "continue"},
		"resourceVersion": {Kind: Property, JSON: "resourceVersion"}, "remainingItemCount": {Kind: Property, JSON: "remainingItemCount"},
	}
	return name
}

// pluralKind is the list field's name: "ConfigMaps" for configmaps.
func pluralKind(kind, resource string) string {
	lk := strings.ToLower(kind)
	if strings.HasPrefix(resource, lk) {
		return kind + resource[len(lk):]
	}
	return Pascal(resource)
}

func (b *builder) resourceFields(r *Resource, vq *ast.Definition, vqt map[string]*Field, vqn nameSet, vm *ast.Definition, vmt map[string]*Field, vmn nameSet) {
	kind := Sanitize(r.Kind)
	t := r.TypeName
	if r.Can("list") {
		f := vqn.take(pluralKind(kind, r.Resource))
		vq.Fields = append(vq.Fields, &ast.FieldDefinition{
			Name: f, Type: ast.NamedType(b.listType(r), nil),
			Description: fmt.Sprintf("List %s (%s).", r.Resource, r.GroupVersion()),
			Arguments:   b.args(r, "labelselector", "fieldselector", "limit", "continue", "sortBy"),
		})
		vqt[f] = &Field{Kind: List, Resource: r}
	}
	if r.Can("get") {
		f := vqn.take(kind)
		vq.Fields = append(vq.Fields, &ast.FieldDefinition{Name: f, Type: ast.NamedType(t, nil), Description: "Get one " + r.Kind + "; null when it does not exist.", Arguments: b.args(r, "name!")})
		vqt[f] = &Field{Kind: Get, Resource: r}
		f = vqn.take(kind + "Yaml")
		vq.Fields = append(vq.Fields, &ast.FieldDefinition{Name: f, Type: ast.NamedType("String", nil), Description: "One " + r.Kind + " as YAML.", Arguments: b.args(r, "name!")})
		vqt[f] = &Field{Kind: YAML, Resource: r}
	}
	var in string
	objArg := func() *ast.ArgumentDefinition {
		if in == "" {
			comp := ""
			for c, n := range b.named {
				if n == t {
					comp = c
				}
			}
			in = b.inputObject(comp)
		}
		return &ast.ArgumentDefinition{Name: "object", Type: ast.NonNullNamedType(in, nil)}
	}
	if r.Can("create") {
		f := vmn.take("create" + kind)
		args := append(b.args(r), objArg())
		args = append(args, b.args(&Resource{}, "dryRun")...)
		vm.Fields = append(vm.Fields, &ast.FieldDefinition{Name: f, Type: ast.NamedType(t, nil), Arguments: args, Description: "Create a " + r.Kind + " (apiVersion and kind are filled in)."})
		vmt[f] = &Field{Kind: Create, Resource: r}
	}
	if r.Can("patch") {
		f := vmn.take("update" + kind)
		args := append(b.args(r, "name!"), objArg())
		args = append(args, b.args(&Resource{}, "dryRun")...)
		vm.Fields = append(vm.Fields, &ast.FieldDefinition{Name: f, Type: ast.NamedType(t, nil), Arguments: args, Description: "Update a " + r.Kind + " with a JSON merge patch of object."})
		vmt[f] = &Field{Kind: Update, Resource: r}
		f = vmn.take("apply" + kind)
		args = append(b.args(r, "name!"), objArg())
		args = append(args, b.args(&Resource{}, "fieldManager", "force", "dryRun")...)
		vm.Fields = append(vm.Fields, &ast.FieldDefinition{Name: f, Type: ast.NamedType(t, nil), Arguments: args, Description: "Server-side apply object as fieldManager."})
		vmt[f] = &Field{Kind: Apply, Resource: r}
	}
	if r.Can("delete") {
		f := vmn.take("delete" + kind)
		args := append(b.args(r, "name!"), b.args(&Resource{}, "dryRun")...)
		vm.Fields = append(vm.Fields, &ast.FieldDefinition{Name: f, Type: ast.NamedType("Boolean", nil), Arguments: args, Description: "Delete a " + r.Kind + "; true once the deletion is accepted."})
		vmt[f] = &Field{Kind: Delete, Resource: r}
	}
}
