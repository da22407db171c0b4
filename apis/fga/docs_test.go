package fga

import (
	"flag"
	"os"
	"strings"
	"testing"
)

var updateDocs = flag.Bool("update", false, "rewrite the model in docs/ from the code")

// docWidget is the bound resource the docs show the module of.
var docWidget = Resource{Group: "example.com", Plural: "widgets", Singular: "widget", Namespaced: true}

// coreExcerpt is the core module as the docs show it: user, role, the
// account, the namespace and one built-in kind, each type's own
// relations in full, the create_/list_/watch_ relations of the other
// kinds and the other kinds' types elided.
func coreExcerpt() string {
	keepUntil := map[string]string{
		"type " + AccountType:   AccountResource.Relation("watch"),
		"type " + NamespaceType: RelationName("watch", "", "configmaps"),
	}
	elided := map[string]string{
		"type " + AccountType:   "    ...                      # every cluster-scoped built-in kind: namespaces, clusterroles, apibindings, ...\n",
		"type " + NamespaceType: "    ...                      # every other namespaced built-in kind: secrets, roles, leases, ...\n",
	}
	shown := map[string]bool{"module " + CoreModuleName: true, "type " + UserType: true, "type " + RoleType: true, "type " + GroupType: true,
		"type " + AccountType: true, "type " + NamespaceType: true, "type " + TypeName("", "configmap"): true}
	var b strings.Builder
	for i, block := range strings.Split(strings.TrimSuffix(CoreModule, "\n"), "\n\n") {
		lines := strings.Split(block, "\n")
		if !shown[lines[0]] {
			continue
		}
		if i > 0 {
			b.WriteString("\n")
		}
		last, cut := keepUntil[lines[0]]
		for _, l := range lines {
			b.WriteString(l + "\n")
			if cut && strings.HasPrefix(strings.TrimSpace(l), "define "+last+":") {
				b.WriteString(elided[lines[0]])
				break
			}
		}
	}
	b.WriteString("...                          # one such type per built-in kind\n")
	return b.String()
}

// docBlocks are the generated blocks of the docs, by the marker that
// starts them.
func docBlocks() map[string]string {
	return map[string]string{
		"<!-- generated: fga core module -->":       coreExcerpt(),
		"<!-- generated: fga widgets module -->":    ResourceModule(docWidget),
		"<!-- generated: fga account relations -->": accountRelations(),
	}
}

// accountRelations are the relations of the account's own object.
func accountRelations() string {
	var b strings.Builder
	b.WriteString("type " + AccountType + "\n  relations\n")
	writeObjectRelations(&b, AccountType, true)
	return b.String()
}

// The model in docs/authorization.md and docs/security-operator.md is
// the code's: every generated block (a marker line, then a fenced block)
// is what the code generates; go test -run TestDocsShowTheModel -update
// rewrites them. authorization.md shows the whole model.
func TestDocsShowTheModel(t *testing.T) {
	const end = "```"
	found := map[string]int{}
	for _, doc := range []string{"../../docs/authorization.md", "../../docs/security-operator.md"} {
		raw, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(raw), "\n")
		var out []string
		for i := 0; i < len(lines); i++ {
			out = append(out, lines[i])
			want, ok := docBlocks()[strings.TrimSpace(lines[i])]
			if !ok {
				continue
			}
			found[doc+" "+lines[i]]++
			if i+1 >= len(lines) || !strings.HasPrefix(lines[i+1], end) {
				t.Fatalf("%s:%d: %s is not followed by a fenced block", doc, i+1, lines[i])
			}
			j := i + 2
			for j < len(lines) && lines[j] != end {
				j++
			}
			if j == len(lines) {
				t.Fatalf("%s:%d: the block after %s does not end", doc, i+1, lines[i])
			}
			got := strings.Join(lines[i+2:j], "\n") + "\n"
			if got != want && !*updateDocs {
				t.Errorf("%s:%d: the block after %s is not the code's model (go test ./apis/fga -run TestDocsShowTheModel -update); want:\n%s", doc, i+1, lines[i], want)
			}
			out = append(out, lines[i+1], strings.TrimSuffix(want, "\n"), end)
			i = j
		}
		if *updateDocs {
			if err := os.WriteFile(doc, []byte(strings.Join(out, "\n")), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, marker := range []string{"<!-- generated: fga core module -->", "<!-- generated: fga widgets module -->"} {
		if found["../../docs/authorization.md "+marker] != 1 {
			t.Errorf("docs/authorization.md shows %q %d times, want once", marker, found["../../docs/authorization.md "+marker])
		}
	}
	if found["../../docs/security-operator.md <!-- generated: fga account relations -->"] != 1 {
		t.Errorf("docs/security-operator.md does not show the account's relations once")
	}
}
