package kubecluster_test

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// buildTestImages builds internal/testimage (static) and writes two OCI
// archives of it: the pause image (entrypoint "testimage pause") and the
// test image (entrypoint "testimage"). Each is one uncompressed layer
// holding the one file, a few MB.
func buildTestImages(t *testing.T, dir, pauseRef, testRef string) (pauseArchive, testArchive string) {
	t.Helper()
	bin := filepath.Join(dir, "testimage")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", bin, "./internal/testimage")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building testimage: %v\n%s", err, out)
	}
	content, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	pauseArchive = filepath.Join(dir, "pause.oci.tar")
	testArchive = filepath.Join(dir, "testimage.oci.tar")
	if err := writeOCIArchive(pauseArchive, pauseRef, content, []string{"/testimage", "pause"}); err != nil {
		t.Fatal(err)
	}
	if err := writeOCIArchive(testArchive, testRef, content, []string{"/testimage"}); err != nil {
		t.Fatal(err)
	}
	return pauseArchive, testArchive
}

type descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int               `json:"size"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// writeOCIArchive writes an OCI image layout as a tar: binary at /testimage
// in one layer, entrypoint, the image named ref.
func writeOCIArchive(path, ref string, binary []byte, entrypoint []string) error {
	var layer bytes.Buffer
	lw := tar.NewWriter(&layer)
	if err := lw.WriteHeader(&tar.Header{Name: "testimage", Mode: 0o755, Size: int64(len(binary)), Typeflag: tar.TypeReg}); err != nil {
		return err
	}
	if _, err := lw.Write(binary); err != nil {
		return err
	}
	if err := lw.Close(); err != nil {
		return err
	}
	blobs := map[string][]byte{}
	add := func(mediaType string, b []byte) descriptor {
		d := fmt.Sprintf("sha256:%x", sha256.Sum256(b))
		blobs[d] = b
		return descriptor{MediaType: mediaType, Digest: d, Size: len(b)}
	}
	layerDesc := add("application/vnd.oci.image.layer.v1.tar", layer.Bytes())
	config, _ := json.Marshal(map[string]any{
		"architecture": "amd64", "os": "linux",
		"config": map[string]any{"Entrypoint": entrypoint, "User": "65534:65534"},
		"rootfs": map[string]any{"type": "layers", "diff_ids": []string{layerDesc.Digest}},
	})
	configDesc := add("application/vnd.oci.image.config.v1+json", config)
	manifest, _ := json.Marshal(map[string]any{
		"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
		"config": configDesc, "layers": []descriptor{layerDesc},
	})
	manifestDesc := add("application/vnd.oci.image.manifest.v1+json", manifest)
	manifestDesc.Annotations = map[string]string{
		"io.containerd.image.name":          ref,
		"org.opencontainers.image.ref.name": ref,
	}
	index, _ := json.Marshal(map[string]any{
		"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
		"manifests": []descriptor{manifestDesc},
	})
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	w := tar.NewWriter(f)
	files := []struct {
		name string
		b    []byte
	}{{"oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`)}, {"index.json", index}}
	for d, b := range blobs {
		files = append(files, struct {
			name string
			b    []byte
		}{"blobs/sha256/" + d[len("sha256:"):], b})
	}
	for _, file := range files {
		if err := w.WriteHeader(&tar.Header{Name: file.name, Mode: 0o644, Size: int64(len(file.b)), Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		if _, err := w.Write(file.b); err != nil {
			return err
		}
	}
	return w.Close()
}
