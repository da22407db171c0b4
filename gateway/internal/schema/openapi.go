// Package schema turns a workspace's discovery and OpenAPI v3 documents into
// a GraphQL schema (a gqlparser ast.Schema) and the table that tells the
// executor how each field is resolved. It does no I/O.
package schema

import (
	"encoding/json"
	"strings"
)

// Schema is the part of an OpenAPI v3 schema object the generator reads.
type Schema struct {
	Ref                  string             `json:"$ref,omitempty"`
	Type                 string             `json:"type,omitempty"`
	Format               string             `json:"format,omitempty"`
	Description          string             `json:"description,omitempty"`
	Properties           map[string]*Schema `json:"properties,omitempty"`
	Required             []string           `json:"required,omitempty"`
	Items                *Schema            `json:"items,omitempty"`
	AdditionalProperties *AdditionalProps   `json:"additionalProperties,omitempty"`
	AllOf                []*Schema          `json:"allOf,omitempty"`
	OneOf                []*Schema          `json:"oneOf,omitempty"`
	AnyOf                []*Schema          `json:"anyOf,omitempty"`
	Enum                 []any              `json:"enum,omitempty"`
	IntOrString          bool               `json:"x-kubernetes-int-or-string,omitempty"`
	PreserveUnknown      bool               `json:"x-kubernetes-preserve-unknown-fields,omitempty"`
	EmbeddedResource     bool               `json:"x-kubernetes-embedded-resource,omitempty"`
	GVK                  []GVK              `json:"x-kubernetes-group-version-kind,omitempty"`
}

// AdditionalProps is additionalProperties: a boolean or a schema.
type AdditionalProps struct {
	Allowed bool
	Schema  *Schema
}

// UnmarshalJSON reads a boolean or a schema.
func (a *AdditionalProps) UnmarshalJSON(b []byte) error {
	s := strings.TrimSpace(string(b))
	if s == "true" || s == "false" {
		a.Allowed = s == "true"
		return nil
	}
	a.Allowed = true
	a.Schema = &Schema{}
	return json.Unmarshal(b, a.Schema)
}

// GVK is one entry of x-kubernetes-group-version-kind.
type GVK struct {
	Group   string `json:"group"`
	Version string `json:"version"`
	Kind    string `json:"kind"`
}

// Document is an OpenAPI v3 document of one group-version.
type Document struct {
	Components struct {
		Schemas map[string]*Schema `json:"schemas"`
	} `json:"components"`
}

// ParseDocument decodes one group-version's OpenAPI v3 document.
func ParseDocument(b []byte) (*Document, error) {
	d := &Document{}
	if err := json.Unmarshal(b, d); err != nil {
		return nil, err
	}
	return d, nil
}

// refName is the component name a $ref points at, or "".
func refName(ref string) string {
	const p = "#/components/schemas/"
	if strings.HasPrefix(ref, p) {
		return strings.TrimPrefix(ref, p)
	}
	return ""
}

// target is the named schema s stands for: a $ref or an allOf of exactly one
// $ref (how Kubernetes' OpenAPI v3 wraps references that carry a default).
func (s *Schema) target() string {
	if s == nil {
		return ""
	}
	if n := refName(s.Ref); n != "" {
		return n
	}
	if len(s.AllOf) == 1 {
		return refName(s.AllOf[0].Ref)
	}
	return ""
}
