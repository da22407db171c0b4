package platformenv

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWriteRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	in := []Entry{{"KUBECONFIG", "/tmp/x/admin.kubeconfig"}, {"CORE_URL", "https://127.0.0.1:6443"}}
	if err := Write(path, in); err != nil {
		t.Fatal(err)
	}
	got, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range in {
		if got[e.Key] != e.Value {
			t.Errorf("%s = %q, want %q", e.Key, got[e.Key], e.Value)
		}
	}
	if len(got) != len(in) {
		t.Errorf("read %d variables, wrote %d: %v", len(got), len(in), got)
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".platform.env-*")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

func TestWriteRefusesUnsafeValues(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	for _, v := range []string{"a b", "$(rm -rf /)", "x\ny", `"q"`} {
		if err := Write(path, []Entry{{"K", v}}); err == nil {
			t.Errorf("Write accepted value %q", v)
		}
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("a refused write left %s (stat: %v)", path, err)
	}
}

func TestReadForms(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	if err := os.WriteFile(path, []byte("# comment\nexport A=1\nB='two'\nC=\"three\"\n\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if got["A"] != "1" || got["B"] != "two" || got["C"] != "three" {
		t.Errorf("Read = %v", got)
	}
	if err := os.WriteFile(path, []byte("no equals sign\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(path); err == nil {
		t.Error("Read accepted a line without =")
	}
}
