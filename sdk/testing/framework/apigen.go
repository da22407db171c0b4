package framework

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Apigen writes crdYAML (one or more CustomResourceDefinitions) into a
// directory, runs core's `apigen --input-dir IN --output-dir OUT` on it
// (found by Binary: $APIGEN_BIN, bin/apigen, or built from core/cmd/apigen)
// and returns OUT, holding APIResourceSchemas and one APIExport per group.
func Apigen(t testing.TB, crdYAML string) string {
	t.Helper()
	bin, err := Binary("apigen", "core", "./cmd/apigen")
	if err != nil {
		t.Fatalf("apigen binary: %v", err)
	}
	in, out := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(in, "crd.yaml"), []byte(crdYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--input-dir", in, "--output-dir", out)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("apigen --input-dir %s --output-dir %s failed: %v\nstdout:\n%s\nstderr:\n%s", in, out, err, stdout.String(), stderr.String())
	}
	entries, _ := os.ReadDir(out)
	var files []string
	for _, e := range entries {
		files = append(files, e.Name())
	}
	t.Logf("apigen wrote %v (stderr: %s)", files, strings.TrimSpace(stderr.String()))
	return out
}

// ExportCRD turns crdYAML into an APIExport of provider: it runs Apigen,
// applies its output in the provider workspace with kubectl and waits for
// the export's identity, which it returns. export is the APIExport's name;
// apigen names it after the CRD's API group.
func (s *Server) ExportCRD(t testing.TB, provider Workspace, crdYAML, export string) string {
	t.Helper()
	s.KubectlFor(provider.Path).Run(t, "apply", "-f", Apigen(t, crdYAML))
	return s.WaitExportIdentity(t, provider, export)
}

// SchemalessCRD is a namespaced CustomResourceDefinition <plural>.<group>,
// served and stored as v1, whose objects may hold anything: the API tests
// export, bind and fill when the schema does not matter.
func SchemalessCRD(group, plural, kind string) string {
	return fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: %[2]s.%[1]s
spec:
  group: %[1]s
  scope: Namespaced
  names: {plural: %[2]s, singular: %[4]s, kind: %[3]s, listKind: %[3]sList}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
`, group, plural, kind, strings.ToLower(kind))
}
