package apigen

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	yamlv3 "go.yaml.in/yaml/v3"

	apisv1alpha1 "github.com/kcp-dev/sdk/apis/apis/v1alpha1"
	apisv1alpha2 "github.com/kcp-dev/sdk/apis/apis/v1alpha2"
)

// ExportResources returns the APIExport resource entries for schemas, which
// must all belong to one group, sorted by resource name.
func ExportResources(schemas []*apisv1alpha1.APIResourceSchema) []apisv1alpha2.ResourceSchema {
	out := make([]apisv1alpha2.ResourceSchema, 0, len(schemas))
	for _, s := range schemas {
		out = append(out, apisv1alpha2.ResourceSchema{
			Name:    s.Spec.Names.Plural,
			Group:   s.Spec.Group,
			Schema:  s.Name,
			Storage: apisv1alpha2.ResourceSchemaStorage{CRD: &apisv1alpha2.ResourceSchemaStorageCRD{}},
		})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// NewAPIExport returns a new APIExport named after group that exports
// resources.
func NewAPIExport(group string, resources []apisv1alpha2.ResourceSchema) *apisv1alpha2.APIExport {
	return &apisv1alpha2.APIExport{
		TypeMeta: metav1.TypeMeta{
			APIVersion: apisv1alpha2.SchemeGroupVersion.String(),
			Kind:       "APIExport",
		},
		ObjectMeta: metav1.ObjectMeta{Name: group},
		Spec:       apisv1alpha2.APIExportSpec{Resources: resources},
	}
}

// MarshalAPIExport renders export as YAML without its status, in the same
// layout UpdateAPIExport produces, so that updating the result with the same
// resources leaves it byte-for-byte unchanged.
func MarshalAPIExport(export *apisv1alpha2.APIExport) ([]byte, error) {
	noStatus := struct {
		metav1.TypeMeta   `json:",inline"`
		metav1.ObjectMeta `json:"metadata,omitempty"`
		Spec              apisv1alpha2.APIExportSpec `json:"spec"`
	}{export.TypeMeta, export.ObjectMeta, export.Spec}
	raw, err := yaml.Marshal(noStatus)
	if err != nil {
		return nil, err
	}
	out, _, err := UpdateAPIExport(raw, export.Spec.Resources)
	return out, err
}

// MarshalSchema renders an APIResourceSchema as YAML.
func MarshalSchema(s *apisv1alpha1.APIResourceSchema) ([]byte, error) {
	return yaml.Marshal(s)
}

// UpdateAPIExport replaces the resources of the APIExport in existing (the
// content of an APIExport YAML file) with resources and returns the new file
// content. Everything else, including permissionClaims, other fields, key
// order and comments, is kept. Existing entries that are not backed by CRD
// storage (e.g. virtual resources) are kept after the generated ones; CRD
// backed entries that are not in resources are removed and returned as
// dropped.
func UpdateAPIExport(existing []byte, resources []apisv1alpha2.ResourceSchema) (out []byte, dropped []string, err error) {
	dec := yamlv3.NewDecoder(bytes.NewReader(existing))
	var docs []*yamlv3.Node
	for {
		doc := &yamlv3.Node{}
		err := dec.Decode(doc)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, nil, fmt.Errorf("invalid YAML: %w", err)
		}
		docs = append(docs, doc)
	}

	var export *yamlv3.Node
	for _, doc := range docs {
		if len(doc.Content) == 0 || doc.Content[0].Kind != yamlv3.MappingNode {
			continue
		}
		root := doc.Content[0]
		if kind := mapGet(root, "kind"); kind == nil || kind.Value != "APIExport" {
			continue
		}
		if export != nil {
			return nil, nil, fmt.Errorf("more than one APIExport document")
		}
		if av := mapGet(root, "apiVersion"); av == nil || av.Value != apisv1alpha2.SchemeGroupVersion.String() {
			got := ""
			if av != nil {
				got = av.Value
			}
			return nil, nil, fmt.Errorf("APIExport has apiVersion %q, only %s is supported", got, apisv1alpha2.SchemeGroupVersion)
		}
		export = root
	}
	if export == nil {
		return nil, nil, fmt.Errorf("no APIExport document found")
	}

	spec := mapGet(export, "spec")
	switch {
	case spec == nil:
		spec = &yamlv3.Node{Kind: yamlv3.MappingNode, Tag: "!!map"}
		mapSet(export, "spec", spec)
	case spec.Kind == yamlv3.ScalarNode && spec.Tag == "!!null":
		*spec = yamlv3.Node{Kind: yamlv3.MappingNode, Tag: "!!map", HeadComment: spec.HeadComment, LineComment: spec.LineComment, FootComment: spec.FootComment}
	case spec.Kind != yamlv3.MappingNode:
		return nil, nil, fmt.Errorf("APIExport spec is not a mapping")
	}
	spec.Style &^= yamlv3.FlowStyle

	wanted := map[string]bool{}
	list := &yamlv3.Node{Kind: yamlv3.SequenceNode, Tag: "!!seq"}
	for _, r := range resources {
		wanted[r.Name+"."+r.Group] = true
		list.Content = append(list.Content, resourceNode(r))
	}
	old := mapGet(spec, "resources")
	if old != nil && old.Kind == yamlv3.SequenceNode {
		for _, item := range old.Content {
			var entry struct {
				Name    string         `yaml:"name"`
				Group   string         `yaml:"group"`
				Storage map[string]any `yaml:"storage"`
			}
			if err := item.Decode(&entry); err != nil {
				return nil, nil, fmt.Errorf("APIExport spec.resources: %w", err)
			}
			if _, crd := entry.Storage["crd"]; !crd {
				list.Content = append(list.Content, item)
				continue
			}
			if !wanted[entry.Name+"."+entry.Group] {
				dropped = append(dropped, entry.Name+"."+entry.Group)
			}
		}
		list.Style = old.Style &^ yamlv3.FlowStyle
		list.HeadComment, list.LineComment, list.FootComment = old.HeadComment, old.LineComment, old.FootComment
	} else if old != nil && !(old.Kind == yamlv3.ScalarNode && old.Tag == "!!null") {
		return nil, nil, fmt.Errorf("APIExport spec.resources is not a list")
	}
	if old != nil {
		*old = *list
	} else {
		// Put resources first, matching the field order of APIExportSpec.
		spec.Content = append([]*yamlv3.Node{scalar("resources"), list}, spec.Content...)
	}

	var buf bytes.Buffer
	enc := yamlv3.NewEncoder(&buf)
	enc.SetIndent(2)
	for _, doc := range docs {
		if err := enc.Encode(doc); err != nil {
			return nil, nil, err
		}
	}
	if err := enc.Close(); err != nil {
		return nil, nil, err
	}
	return buf.Bytes(), dropped, nil
}

func resourceNode(r apisv1alpha2.ResourceSchema) *yamlv3.Node {
	storage := &yamlv3.Node{Kind: yamlv3.MappingNode, Tag: "!!map"}
	if r.Storage.CRD != nil {
		mapSet(storage, "crd", &yamlv3.Node{Kind: yamlv3.MappingNode, Tag: "!!map", Style: yamlv3.FlowStyle})
	}
	n := &yamlv3.Node{Kind: yamlv3.MappingNode, Tag: "!!map"}
	mapSet(n, "name", scalar(r.Name))
	mapSet(n, "group", scalar(r.Group))
	mapSet(n, "schema", scalar(r.Schema))
	mapSet(n, "storage", storage)
	return n
}

func scalar(s string) *yamlv3.Node {
	return &yamlv3.Node{Kind: yamlv3.ScalarNode, Tag: "!!str", Value: s}
}

func mapGet(m *yamlv3.Node, key string) *yamlv3.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

func mapSet(m *yamlv3.Node, key string, value *yamlv3.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content[i+1] = value
			return
		}
	}
	m.Content = append(m.Content, scalar(key), value)
}
