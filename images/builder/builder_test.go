package builder

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/meshplane/meshplane/images/internal/testbinary"
)

var pauseBinary []byte

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "meshplane-builder-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	path, err := testbinary.BuildPause(dir)
	if err == nil {
		pauseBinary, err = os.ReadFile(path)
	}
	if err != nil {
		os.RemoveAll(dir)
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

var testCA = []byte("-----BEGIN CERTIFICATE-----\ntest bundle\n-----END CERTIFICATE-----\n")

func testOptions() Options {
	return Options{
		Registry:       "registry.test/meshplane",
		Version:        "1.2.3",
		Source:         "https://example.test/meshplane",
		Revision:       "0123456789abcdef",
		Created:        time.Unix(1700000000, 0).UTC(),
		CACertificates: testCA,
	}
}

func build(t *testing.T, opts Options, name string, bare bool) *Image {
	t.Helper()
	b, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	img, err := b.Build(name, pauseBinary, bare)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// tarFile is one entry read back from a layer.
type tarFile struct {
	hdr     *tar.Header
	content []byte
}

func readTar(t *testing.T, r io.Reader) (map[string]tarFile, []string) {
	t.Helper()
	files := map[string]tarFile{}
	var order []string
	tr := tar.NewReader(r)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return files, order
		}
		if err != nil {
			t.Fatal(err)
		}
		content, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		files[hdr.Name] = tarFile{hdr: hdr, content: content}
		order = append(order, hdr.Name)
	}
}

func layerFiles(t *testing.T, l v1.Layer) map[string]tarFile {
	t.Helper()
	rc, err := l.Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	files, _ := readTar(t, rc)
	return files
}

func TestImageLayers(t *testing.T) {
	opts := testOptions()
	img := build(t, opts, "meshplane", false)
	layers, err := img.Image.Layers()
	if err != nil {
		t.Fatal(err)
	}
	if len(layers) != 2 {
		t.Fatalf("want a base layer and a binary layer, got %d layers", len(layers))
	}
	for i, l := range layers {
		if mt, _ := l.MediaType(); mt != types.OCILayer {
			t.Errorf("layer %d media type %s, want %s", i, mt, types.OCILayer)
		}
	}

	base := layerFiles(t, layers[0])
	passwd := string(base["etc/passwd"].content)
	if !strings.Contains(passwd, "nonroot:x:65532:65532:") {
		t.Errorf("/etc/passwd has no nonroot user 65532:\n%s", passwd)
	}
	if group := string(base["etc/group"].content); !strings.Contains(group, "nonroot:x:65532:") {
		t.Errorf("/etc/group has no nonroot group 65532:\n%s", group)
	}
	if ca := base["etc/ssl/certs/ca-certificates.crt"]; !bytes.Equal(ca.content, testCA) {
		t.Errorf("CA bundle is %q, want the given bundle", ca.content)
	}
	if tmp := base["tmp/"]; tmp.hdr == nil || tmp.hdr.Typeflag != tar.TypeDir || tmp.hdr.Mode != 0o1777 {
		t.Errorf("/tmp: want a directory with mode 1777, got %+v", tmp.hdr)
	}
	if home := base["home/nonroot/"]; home.hdr == nil || home.hdr.Uid != NonRootUID || home.hdr.Gid != NonRootGID {
		t.Errorf("/home/nonroot: want a directory owned by 65532:65532, got %+v", home.hdr)
	}
	for name, f := range base {
		if !f.hdr.ModTime.Equal(opts.Created) {
			t.Errorf("%s: mtime %s, want the build's %s", name, f.hdr.ModTime, opts.Created)
		}
		if f.hdr.Uname != "" || f.hdr.Gname != "" {
			t.Errorf("%s: carries the build host's user or group name %q/%q", name, f.hdr.Uname, f.hdr.Gname)
		}
	}

	bin := layerFiles(t, layers[1])
	f, ok := bin["usr/local/bin/meshplane"]
	if !ok {
		t.Fatalf("binary layer has no usr/local/bin/meshplane: %v", keys(bin))
	}
	if !bytes.Equal(f.content, pauseBinary) || f.hdr.Mode != 0o755 || f.hdr.Uid != 0 {
		t.Errorf("usr/local/bin/meshplane: mode %o uid %d, %d bytes; want the binary, 0755, root-owned", f.hdr.Mode, f.hdr.Uid, len(f.content))
	}
	for _, dir := range []string{"usr/", "usr/local/", "usr/local/bin/"} {
		if _, ok := bin[dir]; !ok {
			t.Errorf("binary layer lacks parent directory %s", dir)
		}
	}
}

func TestImageConfig(t *testing.T) {
	opts := testOptions()
	img := build(t, opts, "front-proxy", false)
	if img.Ref != "registry.test/meshplane/front-proxy:1.2.3" {
		t.Errorf("reference %q, want registry.test/meshplane/front-proxy:1.2.3", img.Ref)
	}
	cf, err := img.Image.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.Config.User != "65532:65532" {
		t.Errorf("user %q, want 65532:65532", cf.Config.User)
	}
	if got := strings.Join(cf.Config.Entrypoint, " "); got != "/usr/local/bin/front-proxy" {
		t.Errorf("entrypoint %q, want /usr/local/bin/front-proxy", got)
	}
	if cf.OS != "linux" || cf.Architecture == "" {
		t.Errorf("platform %s/%s, want linux and the binary's architecture", cf.OS, cf.Architecture)
	}
	if !cf.Created.Time.Equal(opts.Created) {
		t.Errorf("created %s, want %s", cf.Created.Time, opts.Created)
	}
	for k, want := range map[string]string{LabelVersion: "1.2.3", LabelSource: opts.Source, LabelRevision: opts.Revision} {
		if cf.Config.Labels[k] != want {
			t.Errorf("label %s = %q, want %q", k, cf.Config.Labels[k], want)
		}
	}
	m, err := img.Image.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	if m.MediaType != types.OCIManifestSchema1 || m.Config.MediaType != types.OCIConfigJSON {
		t.Errorf("manifest %s with config %s, want OCI media types", m.MediaType, m.Config.MediaType)
	}
}

func TestBareImageHasOnlyTheBinary(t *testing.T) {
	img := build(t, testOptions(), "pause", true)
	layers, err := img.Image.Layers()
	if err != nil {
		t.Fatal(err)
	}
	if len(layers) != 1 {
		t.Fatalf("bare image: want one layer, got %d", len(layers))
	}
	files := layerFiles(t, layers[0])
	if _, ok := files["usr/local/bin/pause"]; !ok || len(files) != 4 {
		t.Errorf("bare image layer: want usr/, usr/local/, usr/local/bin/ and the binary, got %v", keys(files))
	}
}

func TestArchive(t *testing.T) {
	img := build(t, testOptions(), "pause", true)
	var buf bytes.Buffer
	desc, err := WriteArchive(&buf, img)
	if err != nil {
		t.Fatal(err)
	}
	files, order := readTar(t, &buf)
	if len(order) < 2 || order[0] != "oci-layout" || order[1] != "index.json" {
		t.Errorf("archive starts with %v, want oci-layout then index.json", order)
	}
	var index v1.IndexManifest
	if err := json.Unmarshal(files["index.json"].content, &index); err != nil {
		t.Fatal(err)
	}
	if index.SchemaVersion != 2 || index.MediaType != types.OCIImageIndex || len(index.Manifests) != 1 {
		t.Fatalf("index.json: %s", files["index.json"].content)
	}
	m := index.Manifests[0]
	if m.Annotations[AnnotationContainerdImageName] != "registry.test/meshplane/pause:1.2.3" {
		t.Errorf("%s = %q, want the full reference", AnnotationContainerdImageName, m.Annotations[AnnotationContainerdImageName])
	}
	if m.Annotations[AnnotationRefName] != "1.2.3" {
		t.Errorf("%s = %q, want the tag", AnnotationRefName, m.Annotations[AnnotationRefName])
	}
	if m.Digest != desc.Digest || m.Platform == nil || m.Platform.OS != "linux" {
		t.Errorf("index entry %+v does not describe the written manifest %s for linux", m, desc.Digest)
	}

	// Every blob's name is its content's digest, and every blob the
	// manifest names is there.
	for name, f := range files {
		if !strings.HasPrefix(name, "blobs/sha256/") || f.hdr.Typeflag != tar.TypeReg {
			continue
		}
		sum := sha256.Sum256(f.content)
		if hex.EncodeToString(sum[:]) != strings.TrimPrefix(name, "blobs/sha256/") {
			t.Errorf("%s: content digest is sha256:%x", name, sum)
		}
	}
	var manifest v1.Manifest
	if err := json.Unmarshal(files[blobPath(m.Digest)].content, &manifest); err != nil {
		t.Fatalf("manifest blob: %v", err)
	}
	for _, d := range append([]v1.Descriptor{manifest.Config}, manifest.Layers...) {
		f, ok := files[blobPath(d.Digest)]
		if !ok || int64(len(f.content)) != d.Size {
			t.Errorf("blob %s (%d bytes) missing or of another size", d.Digest, d.Size)
		}
	}
}

func TestReproducible(t *testing.T) {
	archive := func(opts Options) ([]byte, v1.Hash) {
		var buf bytes.Buffer
		desc, err := WriteArchive(&buf, build(t, opts, "meshplane", false))
		if err != nil {
			t.Fatal(err)
		}
		return buf.Bytes(), desc.Digest
	}
	first, d1 := archive(testOptions())
	second, d2 := archive(testOptions())
	if d1 != d2 || !bytes.Equal(first, second) {
		t.Errorf("two builds of the same inputs differ: %s and %s (archives equal: %v)", d1, d2, bytes.Equal(first, second))
	}
	changed := testOptions()
	changed.Revision = "fedcba9876543210"
	if _, d3 := archive(changed); d3 == d1 {
		t.Errorf("another revision gave the same digest %s", d3)
	}
}

func TestStaticArchRefusesDynamicBinaries(t *testing.T) {
	if arch, err := StaticArch(pauseBinary); err != nil || arch == "" {
		t.Fatalf("the CGO_ENABLED=0 pause binary: arch %q, err %v; want static", arch, err)
	}
	if _, err := StaticArch([]byte("#!/bin/sh\necho hi\n")); err == nil {
		t.Error("a shell script was accepted as a static binary")
	}
	dynamic, err := os.ReadFile("/bin/ls")
	if err != nil {
		t.Skipf("no /bin/ls to try a dynamically linked binary: %v", err)
	}
	if _, err := StaticArch(dynamic); err == nil || !strings.Contains(err.Error(), "CGO_ENABLED=0") {
		t.Errorf("/bin/ls (dynamically linked): got %v, want a refusal naming CGO_ENABLED=0", err)
	}
	b, err := New(testOptions())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Build("ls", dynamic, false); err == nil {
		t.Error("Build accepted a dynamically linked binary")
	}
}

func keys(m map[string]tarFile) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
