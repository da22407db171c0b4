package apigen

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// Document is one object of a (possibly multi-document) YAML file, as JSON.
type Document struct {
	// Source names the document for messages, e.g. "crds.yaml#2".
	Source string
	metav1.TypeMeta
	JSON []byte
}

// SplitDocuments parses data, named name in messages, as a stream of YAML
// documents. Empty documents are dropped; documents of kind List are
// flattened into their items. Every document must be a YAML mapping.
func SplitDocuments(name string, data []byte) ([]Document, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var docs []Document
	for i := 1; ; i++ {
		chunk, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: reading YAML document %d: %w", name, i, err)
		}
		src := fmt.Sprintf("%s#%d", name, i)
		j, err := yaml.YAMLToJSONStrict(chunk)
		if err != nil {
			return nil, fmt.Errorf("%s: invalid YAML: %w", src, err)
		}
		j = bytes.TrimSpace(j)
		if len(j) == 0 || string(j) == "null" {
			continue
		}
		more, err := objectDocuments(src, j)
		if err != nil {
			return nil, err
		}
		docs = append(docs, more...)
	}
	return docs, nil
}

func objectDocuments(src string, j []byte) ([]Document, error) {
	if j[0] != '{' {
		return nil, fmt.Errorf("%s: document is not a YAML mapping (a Kubernetes object)", src)
	}
	var tm metav1.TypeMeta
	if err := json.Unmarshal(j, &tm); err != nil {
		return nil, fmt.Errorf("%s: reading apiVersion/kind: %w", src, err)
	}
	if tm.APIVersion == "v1" && tm.Kind == "List" {
		var list struct {
			Items []json.RawMessage `json:"items"`
		}
		if err := json.Unmarshal(j, &list); err != nil {
			return nil, fmt.Errorf("%s: reading List items: %w", src, err)
		}
		var docs []Document
		for i, item := range list.Items {
			more, err := objectDocuments(fmt.Sprintf("%s.items[%d]", src, i), bytes.TrimSpace(item))
			if err != nil {
				return nil, err
			}
			docs = append(docs, more...)
		}
		return docs, nil
	}
	return []Document{{Source: src, TypeMeta: tm, JSON: j}}, nil
}

// IsCRD reports whether d is an apiextensions.k8s.io CustomResourceDefinition
// of any version.
func (d *Document) IsCRD() bool {
	return d.Kind == "CustomResourceDefinition" && strings.HasPrefix(d.APIVersion, apiextensionsv1.GroupName+"/")
}

// ReadCRDs extracts the CustomResourceDefinitions from data (the content of
// the file called name). Documents that are not CRDs are skipped and reported
// through notef if it is not nil. CRDs in a version other than
// apiextensions.k8s.io/v1, or that cannot be decoded, are errors.
func ReadCRDs(name string, data []byte, notef func(format string, args ...any)) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	docs, err := SplitDocuments(name, data)
	if err != nil {
		return nil, err
	}
	var crds []*apiextensionsv1.CustomResourceDefinition
	for _, d := range docs {
		if !d.IsCRD() {
			if notef != nil {
				notef("%s: skipping non-CRD document (apiVersion %q, kind %q)", d.Source, d.APIVersion, d.Kind)
			}
			continue
		}
		if d.APIVersion != apiextensionsv1.SchemeGroupVersion.String() {
			return nil, fmt.Errorf("%s: CustomResourceDefinition in %s is not supported; convert it to %s", d.Source, d.APIVersion, apiextensionsv1.SchemeGroupVersion)
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		dec := json.NewDecoder(bytes.NewReader(d.JSON))
		dec.DisallowUnknownFields()
		if err := dec.Decode(crd); err != nil {
			return nil, fmt.Errorf("%s: decoding CustomResourceDefinition: %w", d.Source, err)
		}
		crds = append(crds, crd)
	}
	return crds, nil
}

// YAMLFiles lists the *.yaml and *.yml files directly inside dir, sorted.
func YAMLFiles(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		switch strings.ToLower(filepath.Ext(e.Name())) {
		case ".yaml", ".yml":
			files = append(files, filepath.Join(dir, e.Name()))
		}
	}
	sort.Strings(files)
	return files, nil
}
