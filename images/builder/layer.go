package builder

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// NonRootUID and NonRootGID are the user and group every image runs as.
const (
	NonRootUID = 65532
	NonRootGID = 65532
)

// BinaryDir is where an image's binary lives.
const BinaryDir = "/usr/local/bin"

// CACertificatesPath is where the base layer puts the CA bundle, the first
// place Go's crypto/x509 looks on Linux.
const CACertificatesPath = "/etc/ssl/certs/ca-certificates.crt"

// entry is one file or directory of a layer.
type entry struct {
	path     string // absolute, cleaned
	dir      bool
	mode     int64
	uid, gid int
	content  []byte
}

// layerTar writes entries as a tar stream: parents before children, sorted,
// every header with the same fixed time and no user or group names.
func layerTar(entries []entry, modTime time.Time) ([]byte, error) {
	all := withParents(entries)
	sort.Slice(all, func(i, j int) bool { return all[i].path < all[j].path })
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range all {
		hdr := &tar.Header{
			Name:    strings.TrimPrefix(e.path, "/"),
			Mode:    e.mode,
			Uid:     e.uid,
			Gid:     e.gid,
			ModTime: modTime,
			Format:  tar.FormatPAX,
		}
		if e.dir {
			hdr.Typeflag = tar.TypeDir
			hdr.Name += "/"
		} else {
			hdr.Typeflag = tar.TypeReg
			hdr.Size = int64(len(e.content))
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, fmt.Errorf("writing header of %s: %w", e.path, err)
		}
		if !e.dir {
			if _, err := tw.Write(e.content); err != nil {
				return nil, fmt.Errorf("writing %s: %w", e.path, err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// withParents adds a root-owned 0755 directory for every missing parent.
func withParents(entries []entry) []entry {
	seen := map[string]bool{}
	for _, e := range entries {
		seen[e.path] = true
	}
	out := append([]entry(nil), entries...)
	for _, e := range entries {
		for dir := path.Dir(e.path); dir != "/" && !seen[dir]; dir = path.Dir(dir) {
			seen[dir] = true
			out = append(out, entry{path: dir, dir: true, mode: 0o755})
		}
	}
	return out
}

// newLayer turns a tar stream into a gzip-compressed OCI layer.
func newLayer(tarBytes []byte) (v1.Layer, error) {
	return tarball.LayerFromOpener(
		func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(tarBytes)), nil },
		tarball.WithMediaType(types.OCILayer),
		tarball.WithCompressionLevel(gzip.DefaultCompression),
		tarball.WithCompressedCaching,
	)
}

// baseEntries is what a Go server needs beside its binary.
func baseEntries(caCertificates []byte) []entry {
	passwd := fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:%d:%d:nonroot:/home/nonroot:/sbin/nologin\n", NonRootUID, NonRootGID)
	group := fmt.Sprintf("root:x:0:\nnonroot:x:%d:\n", NonRootGID)
	return []entry{
		{path: "/etc/passwd", mode: 0o644, content: []byte(passwd)},
		{path: "/etc/group", mode: 0o644, content: []byte(group)},
		{path: "/etc/nsswitch.conf", mode: 0o644, content: []byte("hosts: files dns\n")},
		{path: CACertificatesPath, mode: 0o644, content: caCertificates},
		{path: "/home/nonroot", dir: true, mode: 0o700, uid: NonRootUID, gid: NonRootGID},
		{path: "/tmp", dir: true, mode: 0o1777},
	}
}

// binaryEntries is the layer holding one executable.
func binaryEntries(name string, binary []byte) []entry {
	return []entry{{path: path.Join(BinaryDir, name), mode: 0o755, content: binary}}
}
