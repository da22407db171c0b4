package builder

import (
	"archive/tar"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Annotations of index.json's manifest descriptor: containerd names the
// imported image after the first, OCI layout tools after the second (the tag,
// as `docker save` writes it).
const (
	AnnotationContainerdImageName = "io.containerd.image.name"
	AnnotationRefName             = "org.opencontainers.image.ref.name"
)

// WriteArchive writes img as an OCI image layout tarball: oci-layout,
// index.json naming the image, and blobs/sha256/ with the manifest, the
// config and the compressed layers. It returns the manifest's descriptor.
func WriteArchive(w io.Writer, img *Image) (v1.Descriptor, error) {
	manifest, err := img.Image.RawManifest()
	if err != nil {
		return v1.Descriptor{}, err
	}
	digest, err := img.Image.Digest()
	if err != nil {
		return v1.Descriptor{}, err
	}
	config, err := img.Image.RawConfigFile()
	if err != nil {
		return v1.Descriptor{}, err
	}
	configName, err := img.Image.ConfigName()
	if err != nil {
		return v1.Descriptor{}, err
	}
	layers, err := img.Image.Layers()
	if err != nil {
		return v1.Descriptor{}, err
	}
	desc := v1.Descriptor{
		MediaType: types.OCIManifestSchema1,
		Digest:    digest,
		Size:      int64(len(manifest)),
		Annotations: map[string]string{
			AnnotationContainerdImageName: img.Ref,
			AnnotationRefName:             img.Tag,
		},
		Platform: &v1.Platform{OS: "linux", Architecture: img.Arch},
	}
	index, err := json.Marshal(v1.IndexManifest{
		SchemaVersion: 2,
		MediaType:     types.OCIImageIndex,
		Manifests:     []v1.Descriptor{desc},
	})
	if err != nil {
		return v1.Descriptor{}, err
	}

	cf, err := img.Image.ConfigFile()
	if err != nil {
		return v1.Descriptor{}, err
	}
	aw := &archiveWriter{tw: tar.NewWriter(w), modTime: cf.Created.Time}
	aw.file("oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`))
	aw.file("index.json", index)
	aw.dir("blobs/")
	aw.dir("blobs/sha256/")
	written := map[v1.Hash]bool{}
	aw.file(blobPath(digest), manifest)
	aw.file(blobPath(configName), config)
	written[digest], written[configName] = true, true
	for _, l := range layers {
		ld, err := l.Digest()
		if err != nil {
			return v1.Descriptor{}, err
		}
		if written[ld] {
			continue
		}
		written[ld] = true
		size, err := l.Size()
		if err != nil {
			return v1.Descriptor{}, err
		}
		rc, err := l.Compressed()
		if err != nil {
			return v1.Descriptor{}, err
		}
		aw.stream(blobPath(ld), size, rc)
		rc.Close()
	}
	if aw.err == nil {
		aw.err = aw.tw.Close()
	}
	return desc, aw.err
}

// WriteArchiveFile writes the archive to path (through a temporary file in
// the same directory, renamed once complete).
func WriteArchiveFile(path string, img *Image) (v1.Descriptor, error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".image-*.tar")
	if err != nil {
		return v1.Descriptor{}, err
	}
	defer os.Remove(tmp.Name())
	desc, err := WriteArchive(tmp, img)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return v1.Descriptor{}, fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return v1.Descriptor{}, err
	}
	return desc, os.Rename(tmp.Name(), path)
}

func blobPath(h v1.Hash) string { return "blobs/" + h.Algorithm + "/" + h.Hex }

// archiveWriter keeps the first error so the writing reads top to bottom.
type archiveWriter struct {
	tw      *tar.Writer
	modTime time.Time
	err     error
}

func (a *archiveWriter) header(name string, typ byte, mode, size int64) {
	if a.err != nil {
		return
	}
	a.err = a.tw.WriteHeader(&tar.Header{
		Name: name, Typeflag: typ, Mode: mode, Size: size,
		ModTime: a.modTime, Format: tar.FormatPAX,
	})
}

func (a *archiveWriter) dir(name string) { a.header(name, tar.TypeDir, 0o755, 0) }

func (a *archiveWriter) file(name string, content []byte) {
	a.header(name, tar.TypeReg, 0o644, int64(len(content)))
	if a.err == nil {
		_, a.err = a.tw.Write(content)
	}
}

func (a *archiveWriter) stream(name string, size int64, r io.Reader) {
	a.header(name, tar.TypeReg, 0o644, size)
	if a.err == nil {
		var n int64
		n, a.err = io.Copy(a.tw, r)
		if a.err == nil && n != size {
			a.err = fmt.Errorf("%s: wrote %d bytes, want %d", name, n, size)
		}
	}
}
