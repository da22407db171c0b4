package fga

import (
	"fmt"
	"sort"

	openfgav1 "github.com/openfga/api/proto/openfga/v1"
	"github.com/openfga/language/pkg/go/transformer"
)

// SchemaVersion is the schema of composed models (modules need 1.2).
const SchemaVersion = "1.2"

// Module is one module file of a model.
type Module struct {
	// Name identifies the module in errors and in the model's source
	// information (e.g. "core", or the AuthorizationModel's name).
	Name string
	// Contents is the module in OpenFGA's modelling language.
	Contents string
}

// ModuleInfo is what a module declares.
type ModuleInfo struct {
	// Types maps the types the module defines to their relations.
	Types map[string][]string
	// Extends maps the types the module extends to the relations it adds.
	Extends map[string][]string
	// Conditions are the conditions the module defines.
	Conditions []string
}

// ParseModule parses one module with OpenFGA's language package.
func ParseModule(contents string) (ModuleInfo, error) {
	model, extensions, err := transformer.TransformModularDSLToProto(contents)
	if err != nil {
		return ModuleInfo{}, err
	}
	info := ModuleInfo{Types: map[string][]string{}, Extends: map[string][]string{}}
	for _, td := range model.GetTypeDefinitions() {
		rels := relationNames(td)
		if _, ok := extensions[td.GetType()]; ok {
			info.Extends[td.GetType()] = rels
			continue
		}
		info.Types[td.GetType()] = rels
	}
	for name := range model.GetConditions() {
		info.Conditions = append(info.Conditions, name)
	}
	sort.Strings(info.Conditions)
	return info, nil
}

func relationNames(td *openfgav1.TypeDefinition) []string {
	var rels []string
	for name := range td.GetRelations() {
		rels = append(rels, name)
	}
	sort.Strings(rels)
	return rels
}

// Compose merges modules into one model (schema 1.2) with OpenFGA's
// language package; any conflict fails the whole composition.
func Compose(modules []Module) (*openfgav1.AuthorizationModel, error) {
	files := make([]transformer.ModuleFile, 0, len(modules))
	for _, m := range modules {
		files = append(files, transformer.ModuleFile{Name: FileName(m.Name), Contents: m.Contents})
	}
	model, err := transformer.TransformModuleFilesToModel(files, SchemaVersion)
	if err != nil {
		return nil, fmt.Errorf("composing %d modules: %w", len(modules), err)
	}
	return model, nil
}

// FileName is the source file a module's types are attributed to in the
// model: OpenFGA accepts only names matching ^[a-zA-Z0-9_\-\/]{1,100}\.fga$,
// so other characters become "_".
func FileName(module string) string {
	b := []byte(module)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '/') {
			b[i] = '_'
		}
	}
	if len(b) > 96 {
		b = b[:96]
	}
	if len(b) == 0 {
		b = []byte("module")
	}
	return string(b) + ".fga"
}

// ComposeSkipping composes core and, in the given order, every other
// module that fits: a module that does not parse, defines a type or
// condition an earlier module defines, adds a relation a type already has,
// or extends a type no accepted module defines is left out, and the
// reason is returned under its name. So one bad module never takes the
// others' types away. An error means the core module alone is unusable.
func ComposeSkipping(core Module, others []Module) (*openfgav1.AuthorizationModel, map[string]error, error) {
	coreInfo, err := ParseModule(core.Contents)
	if err != nil {
		return nil, nil, fmt.Errorf("core module %q: %w", core.Name, err)
	}
	if len(coreInfo.Extends) != 0 {
		return nil, nil, fmt.Errorf("core module %q extends types; it must define them", core.Name)
	}
	rejected := map[string]error{}
	type candidate struct {
		Module
		info ModuleInfo
	}
	var accepted []candidate
	seen := map[string]bool{core.Name: true}
	for _, m := range others {
		if seen[m.Name] {
			rejected[m.Name] = fmt.Errorf("module name %q is used twice", m.Name)
			continue
		}
		seen[m.Name] = true
		info, err := ParseModule(m.Contents)
		if err != nil {
			rejected[m.Name] = err
			continue
		}
		accepted = append(accepted, candidate{Module: m, info: info})
	}

	// Drop the first module in order that conflicts with the ones before
	// it, and start over, until none does.
	for {
		bad, reason := -1, error(nil)
		types := map[string]map[string]string{}
		conditions := map[string]string{}
		define := func(owner string, info ModuleInfo) (bool, error) {
			for t, rels := range info.Types {
				if prev, ok := types[t]; ok {
					return false, fmt.Errorf("type %s is already defined by module %q", t, prev[""])
				}
				types[t] = map[string]string{"": owner}
				for _, r := range rels {
					types[t][r] = owner
				}
			}
			for _, c := range info.Conditions {
				if prev, ok := conditions[c]; ok {
					return false, fmt.Errorf("condition %s is already defined by module %q", c, prev)
				}
				conditions[c] = owner
			}
			return true, nil
		}
		if _, err := define(core.Name, coreInfo); err != nil {
			return nil, nil, fmt.Errorf("core module %q: %w", core.Name, err)
		}
		for i, c := range accepted {
			if _, err := define(c.Name, c.info); err != nil {
				bad, reason = i, err
				break
			}
		}
		if bad < 0 {
		extensions:
			for i, c := range accepted {
				for t, rels := range c.info.Extends {
					have, ok := types[t]
					if !ok {
						bad, reason = i, fmt.Errorf("extended type %s is not defined by any module", t)
						break extensions
					}
					for _, r := range rels {
						if prev, ok := have[r]; ok {
							bad, reason = i, fmt.Errorf("relation %s of type %s is already defined by module %q", r, t, prev)
							break extensions
						}
						have[r] = c.Name
					}
				}
			}
		}
		if bad < 0 {
			break
		}
		rejected[accepted[bad].Name] = reason
		accepted = append(accepted[:bad], accepted[bad+1:]...)
	}

	modules := []Module{core}
	for _, c := range accepted {
		modules = append(modules, c.Module)
	}
	model, err := Compose(modules)
	if err != nil {
		return nil, rejected, err
	}
	return model, rejected, nil
}

// The model limits the platform configures its OpenFGA server with
// (OpenFGA's defaults, 100 types and 256 KiB, are too small for an
// organization with a few hundred bound resources). An external OpenFGA
// needs the same settings: OPENFGA_MAX_TYPES_PER_AUTHORIZATION_MODEL and
// OPENFGA_MAX_AUTHORIZATION_MODEL_SIZE_IN_BYTES.
const (
	// MaxTypesPerModel is the most types a model may have.
	MaxTypesPerModel = 2000
	// MaxModelSizeBytes is the largest model, in bytes.
	MaxModelSizeBytes = 8 << 20
)
