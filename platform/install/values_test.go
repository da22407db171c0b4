package install

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseSet(t *testing.T) {
	for _, tc := range []struct {
		in      []string
		want    map[string]any
		wantErr string
	}{
		{in: []string{"core.replicas=2"}, want: map[string]any{"core": map[string]any{"replicas": int64(2)}}},
		{in: []string{"a=1,b.c=x", "b.d=true"}, want: map[string]any{"a": int64(1), "b": map[string]any{"c": "x", "d": true}}},
		{in: []string{"list[0]=x"}, want: map[string]any{"list": []any{"x"}}},
		{in: []string{"core.replicas"}, wantErr: `--set "core.replicas"`},
		{in: []string{"a=1", "list[x]=1"}, wantErr: `--set "list[x]=1"`},
	} {
		got, err := parseSet(tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("parseSet(%q) error = %v, want one naming %s", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("parseSet(%q): %v", tc.in, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("parseSet(%q) = %#v, want %#v", tc.in, got, tc.want)
		}
	}
}

// Later --values files win over earlier ones, --set over every file.
func TestMergeValuesOrder(t *testing.T) {
	dir := t.TempDir()
	first := filepath.Join(dir, "first.yaml")
	second := filepath.Join(dir, "second.yaml")
	if err := os.WriteFile(first, []byte("core:\n  replicas: 1\n  logLevel: 4\nbootstrap:\n  enabled: false\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(second, []byte("core:\n  replicas: 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	o := NewOptions(nil)
	o.ValueFiles = []string{first, second}
	o.Set = []string{"core.logLevel=6"}
	got, err := o.mergeValues()
	if err != nil {
		t.Fatal(err)
	}
	core := got["core"].(map[string]any)
	if core["replicas"] != float64(3) {
		t.Errorf("core.replicas = %#v, want 3 (the second file)", core["replicas"])
	}
	if core["logLevel"] != int64(6) {
		t.Errorf("core.logLevel = %#v, want 6 (--set)", core["logLevel"])
	}
	if got["bootstrap"].(map[string]any)["enabled"] != false {
		t.Errorf("bootstrap.enabled = %#v, want false (the first file, untouched by later ones)", got["bootstrap"])
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name    string
		change  func(*Options)
		wantErr string
	}{
		{name: "defaults", change: func(*Options) {}},
		{name: "bad set", change: func(o *Options) { o.Set = []string{"novalue"} }, wantErr: `--set "novalue"`},
		{name: "missing values file", change: func(o *Options) { o.ValueFiles = []string{"/nonexistent/values.yaml"} }, wantErr: "/nonexistent/values.yaml"},
		{name: "empty namespace", change: func(o *Options) { o.Namespace = "" }, wantErr: "--namespace"},
		{name: "zero timeout", change: func(o *Options) { o.Timeout = 0 }, wantErr: "--timeout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := NewOptions(nil)
			tc.change(o)
			err := o.Validate()
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("Validate: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("Validate error = %v, want one naming %s", err, tc.wantErr)
			}
		})
	}
}

func TestCheckKubeContext(t *testing.T) {
	dir := t.TempDir()
	noCurrent := filepath.Join(dir, "none")
	if err := os.WriteFile(noCurrent, []byte("apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	o := NewOptions(nil)
	o.Kubeconfig = noCurrent
	if err := o.checkKubeContext(); err == nil || !strings.Contains(err.Error(), "no kube context") {
		t.Errorf("kubeconfig without a current context: error = %v, want \"no kube context\"", err)
	}
	o.Context = "elsewhere"
	if err := o.checkKubeContext(); err == nil || !strings.Contains(err.Error(), `"elsewhere" not found`) {
		t.Errorf("--context elsewhere: error = %v, want it named as not found", err)
	}
}
