package launcher

import (
	"slices"
	"strings"
	"testing"
)

func TestParseFlagsExamples(t *testing.T) {
	t.Setenv("EXAMPLES", "")
	c, err := ParseFlags([]string{"--bin-dir", "/x/bin", "--examples", "postgres, mongodb,postgres"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.Examples, []string{"postgres", "mongodb"}) || c.ExamplesDir != "/x/examples" {
		t.Errorf("examples %v in %s", c.Examples, c.ExamplesDir)
	}
	if names := exampleComponents(&Config{Examples: c.Examples, RootDir: t.TempDir(), Ports: Ports{Base: 20000}}); len(names) != 2 ||
		names[0].Name != "postgres-provider" || names[1].Name != "mongodb-provider" {
		t.Errorf("components %v", names)
	}
	if _, err := ParseFlags([]string{"--bin-dir", "/x/bin", "--examples", "redis"}); err == nil || !strings.Contains(err.Error(), `unknown example "redis"`) {
		t.Errorf("an unknown example must be refused: %v", err)
	}
	t.Setenv("EXAMPLES", "mongodb")
	if c, err := ParseFlags([]string{"--bin-dir", "/x/bin"}); err != nil || !slices.Equal(c.Examples, []string{"mongodb"}) {
		t.Errorf("$EXAMPLES: %v %v", c.Examples, err)
	}
	if c, err := ParseFlags([]string{"--bin-dir", "/x/bin", "--examples", ""}); err != nil || len(c.Examples) != 0 {
		t.Errorf("none by default: %v %v", c.Examples, err)
	}
}
