package framework

import (
	"reflect"
	"testing"
)

func TestShellBlocks(t *testing.T) {
	md := "# T\n```sh\necho a\necho b\n```\ntext\n```console\n$ not run\n```\n```bash\necho c\n```\n"
	got := ShellBlocks(md)
	want := []string{"echo a\necho b\n", "echo c\n"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("ShellBlocks = %q, want %q", got, want)
	}
}
