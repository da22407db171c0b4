package apigen

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	apisv1alpha1 "github.com/kcp-dev/sdk/apis/apis/v1alpha1"
)

// Options configures Run.
type Options struct {
	// InputDir is a directory whose *.yaml and *.yml files are read.
	InputDir string
	// Files are input files, used instead of InputDir. "-" is standard input.
	Files []string
	// OutputDir receives the generated files. Empty or "-" writes all
	// objects as one YAML stream to Stdout instead.
	OutputDir string

	Stdin  io.Reader
	Stdout io.Writer
	// Stderr receives notes (skipped documents, written files, warnings).
	Stderr io.Writer
	// Now is the clock for schema name prefixes; time.Now if nil.
	Now func() time.Time
}

// SchemaFileName is the output file name of an APIResourceSchema.
func SchemaFileName(s *apisv1alpha1.APIResourceSchema) string {
	return "apiresourceschema-" + s.Spec.Names.Plural + "." + s.Spec.Group + ".yaml"
}

// ExportFileName is the output file name of the APIExport of group.
func ExportFileName(group string) string {
	return "apiexport-" + group + ".yaml"
}

// Run reads the CRDs named by o and writes APIResourceSchemas and APIExports.
func Run(o Options) error {
	if o.Stdin == nil {
		o.Stdin = os.Stdin
	}
	if o.Stdout == nil {
		o.Stdout = os.Stdout
	}
	if o.Stderr == nil {
		o.Stderr = os.Stderr
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	notef := func(format string, args ...any) { fmt.Fprintf(o.Stderr, format+"\n", args...) }

	crds, err := readInputs(o, notef)
	if err != nil {
		return err
	}

	toStdout := o.OutputDir == "" || o.OutputDir == "-"
	var existing map[string]string
	if !toStdout {
		if existing, err = ExistingSchemaNames(o.OutputDir, notef); err != nil {
			return err
		}
	}
	schemas, err := Generate(crds, o.Now(), existing, notef)
	if err != nil {
		return err
	}

	groups := map[string][]*apisv1alpha1.APIResourceSchema{}
	var groupNames []string
	for _, s := range schemas {
		if groups[s.Spec.Group] == nil {
			groupNames = append(groupNames, s.Spec.Group)
		}
		groups[s.Spec.Group] = append(groups[s.Spec.Group], s)
	}
	sort.Strings(groupNames)

	if toStdout {
		var buf bytes.Buffer
		for _, s := range schemas {
			out, err := MarshalSchema(s)
			if err != nil {
				return fmt.Errorf("encoding APIResourceSchema %s: %w", s.Name, err)
			}
			buf.WriteString("---\n")
			buf.Write(out)
		}
		for _, g := range groupNames {
			out, err := MarshalAPIExport(NewAPIExport(g, ExportResources(groups[g])))
			if err != nil {
				return fmt.Errorf("encoding APIExport %s: %w", g, err)
			}
			buf.WriteString("---\n")
			buf.Write(out)
		}
		_, err := o.Stdout.Write(buf.Bytes())
		return err
	}

	// Render everything before writing anything, so that bad input leaves
	// the output directory untouched.
	type file struct {
		path string
		data []byte
	}
	var files []file
	for _, s := range schemas {
		out, err := MarshalSchema(s)
		if err != nil {
			return fmt.Errorf("encoding APIResourceSchema %s: %w", s.Name, err)
		}
		files = append(files, file{filepath.Join(o.OutputDir, SchemaFileName(s)), out})
	}
	for _, g := range groupNames {
		resources := ExportResources(groups[g])
		path := filepath.Join(o.OutputDir, ExportFileName(g))
		var out []byte
		old, err := os.ReadFile(path)
		switch {
		case err == nil:
			var dropped []string
			out, dropped, err = UpdateAPIExport(old, resources)
			if err != nil {
				return fmt.Errorf("updating %s: %w", path, err)
			}
			for _, d := range dropped {
				notef("%s: removing resource %s, which is not among the input CRDs", path, d)
			}
		case errors.Is(err, fs.ErrNotExist):
			out, err = MarshalAPIExport(NewAPIExport(g, resources))
			if err != nil {
				return fmt.Errorf("encoding APIExport %s: %w", g, err)
			}
		default:
			return err
		}
		files = append(files, file{path, out})
	}

	if err := os.MkdirAll(o.OutputDir, 0o755); err != nil {
		return err
	}
	for _, f := range files {
		if err := writeIfChanged(f.path, f.data, notef); err != nil {
			return err
		}
	}
	return nil
}

func readInputs(o Options, notef func(string, ...any)) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	files := o.Files
	switch {
	case o.InputDir != "" && len(files) > 0:
		return nil, fmt.Errorf("use either --input-dir or input file arguments, not both")
	case o.InputDir != "":
		var err error
		if files, err = YAMLFiles(o.InputDir); err != nil {
			return nil, fmt.Errorf("reading input directory: %w", err)
		}
		if len(files) == 0 {
			return nil, fmt.Errorf("input directory %s contains no *.yaml or *.yml files", o.InputDir)
		}
	case len(files) == 0:
		return nil, fmt.Errorf("no input: set --input-dir or pass input files")
	}

	var crds []*apiextensionsv1.CustomResourceDefinition
	for _, f := range files {
		var data []byte
		var err error
		name := f
		if f == "-" {
			name = "<stdin>"
			data, err = io.ReadAll(o.Stdin)
		} else {
			data, err = os.ReadFile(f)
		}
		if err != nil {
			return nil, err
		}
		more, err := ReadCRDs(name, data, notef)
		if err != nil {
			return nil, err
		}
		crds = append(crds, more...)
	}
	if len(crds) == 0 {
		return nil, fmt.Errorf("no CustomResourceDefinitions found in the input")
	}
	return crds, nil
}

// Generate converts crds into named APIResourceSchemas sorted by group and
// plural. existing maps spec hashes (see SpecHash) to the names of schemas
// already generated; a schema whose hash is in it reuses that name, others
// are named after now.
func Generate(crds []*apiextensionsv1.CustomResourceDefinition, now time.Time, existing map[string]string, warnf func(string, ...any)) ([]*apisv1alpha1.APIResourceSchema, error) {
	seen := map[string]string{}
	var schemas []*apisv1alpha1.APIResourceSchema
	for _, crd := range crds {
		id := crd.Spec.Names.Plural + "." + crd.Spec.Group
		label := crd.Name
		if label == "" {
			label = id
		}
		s, err := ConvertCRD(crd, warnf)
		if err != nil {
			return nil, fmt.Errorf("CustomResourceDefinition %s: %w", label, err)
		}
		if prev, dup := seen[id]; dup {
			return nil, fmt.Errorf("CustomResourceDefinition %s: resource %s is defined more than once (also by %s)", label, id, prev)
		}
		seen[id] = label
		hash, err := SpecHash(&s.Spec)
		if err != nil {
			return nil, fmt.Errorf("CustomResourceDefinition %s: hashing spec: %w", label, err)
		}
		if name, ok := existing[hash]; ok {
			s.Name = name
		} else {
			s.Name = SchemaName(SchemaPrefix(now, hash), &s.Spec)
		}
		schemas = append(schemas, s)
	}
	sort.Slice(schemas, func(i, j int) bool {
		a, b := schemas[i].Spec, schemas[j].Spec
		if a.Group != b.Group {
			return a.Group < b.Group
		}
		return a.Names.Plural < b.Names.Plural
	})
	return schemas, nil
}

// ExistingSchemaNames reads the APIResourceSchemas in the YAML files of dir
// and maps their spec hashes to their names. A missing dir yields an empty
// map; files that cannot be parsed are skipped with a note. When several
// schemas share a hash, the one in its standard file (SchemaFileName) wins,
// otherwise the first in file name order.
func ExistingSchemaNames(dir string, notef func(string, ...any)) (map[string]string, error) {
	names := map[string]string{}
	files, err := YAMLFiles(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return names, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading output directory: %w", err)
	}
	preferred := map[string]bool{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		docs, err := SplitDocuments(f, data)
		if err != nil {
			notef("ignoring existing file %s: %v", f, err)
			continue
		}
		for _, d := range docs {
			if d.Kind != "APIResourceSchema" || d.APIVersion != apisv1alpha1.SchemeGroupVersion.String() {
				continue
			}
			var s apisv1alpha1.APIResourceSchema
			if err := json.Unmarshal(d.JSON, &s); err != nil {
				notef("ignoring existing APIResourceSchema in %s: %v", d.Source, err)
				continue
			}
			if s.Name == "" {
				continue
			}
			hash, err := SpecHash(&s.Spec)
			if err != nil {
				return nil, err
			}
			standard := filepath.Base(f) == SchemaFileName(&s)
			if _, ok := names[hash]; !ok || (standard && !preferred[hash]) {
				names[hash] = s.Name
				preferred[hash] = standard
			}
		}
	}
	return names, nil
}

func writeIfChanged(path string, data []byte, notef func(string, ...any)) error {
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
		notef("unchanged %s", path)
		return nil
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return err
	}
	notef("wrote %s", path)
	return nil
}
