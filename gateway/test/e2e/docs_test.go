package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

var graphqlBlock = regexp.MustCompile("(?s)```graphql\n(.*?)```")

// TestDocsExamples runs every ```graphql block of docs/graphql.md, in
// order, in a fresh workspace, and fails on any error.
func TestDocsExamples(t *testing.T) {
	t.Parallel()
	root, err := framework.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(root, "docs", "graphql.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := graphqlBlock.FindAllSubmatch(doc, -1)
	if len(blocks) < 5 {
		t.Fatalf("docs/graphql.md has %d graphql examples, want at least 5", len(blocks))
	}
	s := framework.SharedServer(t)
	ws := userWorkspace(t, s, "gql-docs", "alice")
	c := newClient(t, ws.Path, s.UserToken(t, "alice"))
	for i, b := range blocks {
		d := c.must(t, string(b[1]), nil)
		t.Logf("example %d: %v", i+1, d)
	}
}

// docBlock returns the ```<tag> block of docs/graphql.md, so that the
// examples there are the ones the tests run.
func docBlock(t *testing.T, tag string) string {
	t.Helper()
	root, err := framework.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(root, "docs", "graphql.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)```" + regexp.QuoteMeta(tag) + "\n(.*?)```").FindSubmatch(doc)
	if m == nil {
		t.Fatalf("docs/graphql.md has no ```%s block", tag)
	}
	return string(m[1])
}
