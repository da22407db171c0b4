package builder

import (
	"fmt"
	"path"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// OCI label keys every image carries.
const (
	LabelVersion  = "org.opencontainers.image.version"
	LabelSource   = "org.opencontainers.image.source"
	LabelRevision = "org.opencontainers.image.revision"
	LabelTitle    = "org.opencontainers.image.title"
)

// Options are the inputs shared by every image of one build.
type Options struct {
	// Registry prefixes every reference, e.g. ghcr.io/meshplane.
	Registry string
	// Version is every image's tag and its version label.
	Version string
	// Source and Revision become the source and revision labels.
	Source   string
	Revision string
	// Created is every timestamp: the config's, the history's and each
	// tar entry's. A fixed value makes the digests reproducible.
	Created time.Time
	// CACertificates is the PEM bundle the base layer carries.
	CACertificates []byte
}

// Builder builds images that share one base layer.
type Builder struct {
	opts Options
	base v1.Layer
}

// Image is one built image and the reference it is known by.
type Image struct {
	Name string
	// Ref is <registry>/<name>:<version>.
	Ref   string
	Tag   string
	Arch  string
	Image v1.Image
}

// New validates opts and builds the shared base layer.
func New(opts Options) (*Builder, error) {
	if opts.Registry == "" || opts.Version == "" {
		return nil, fmt.Errorf("registry and version are required")
	}
	if len(opts.CACertificates) == 0 {
		return nil, fmt.Errorf("no CA certificates given")
	}
	tarBytes, err := layerTar(baseEntries(opts.CACertificates), opts.Created)
	if err != nil {
		return nil, fmt.Errorf("base layer: %w", err)
	}
	base, err := newLayer(tarBytes)
	if err != nil {
		return nil, fmt.Errorf("base layer: %w", err)
	}
	return &Builder{opts: opts, base: base}, nil
}

// Build makes the image <name> running binary as the nonroot user. A bare
// image has no base layer, only the binary (the pause image: it opens no
// file and resolves no user).
func (b *Builder) Build(name string, binary []byte, bare bool) (*Image, error) {
	arch, err := StaticArch(binary)
	if err != nil {
		return nil, fmt.Errorf("image %s: %w", name, err)
	}
	tarBytes, err := layerTar(binaryEntries(name, binary), b.opts.Created)
	if err != nil {
		return nil, fmt.Errorf("image %s: %w", name, err)
	}
	binLayer, err := newLayer(tarBytes)
	if err != nil {
		return nil, fmt.Errorf("image %s: %w", name, err)
	}

	created := v1.Time{Time: b.opts.Created.UTC()}
	entrypoint := path.Join(BinaryDir, name)
	cfg := &v1.ConfigFile{
		Created:      created,
		Architecture: arch,
		OS:           "linux",
		RootFS:       v1.RootFS{Type: "layers"},
		Config: v1.Config{
			User:       fmt.Sprintf("%d:%d", NonRootUID, NonRootGID),
			Entrypoint: []string{entrypoint},
			Env:        []string{"PATH=" + BinaryDir, "HOME=/home/nonroot"},
			WorkingDir: "/",
			Labels: map[string]string{
				LabelTitle:    name,
				LabelVersion:  b.opts.Version,
				LabelSource:   b.opts.Source,
				LabelRevision: b.opts.Revision,
			},
		},
	}
	if bare {
		cfg.Config.Env = []string{"PATH=" + BinaryDir}
	}

	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	if img, err = mutate.ConfigFile(img, cfg); err != nil {
		return nil, fmt.Errorf("image %s: %w", name, err)
	}
	var adds []mutate.Addendum
	if !bare {
		adds = append(adds, mutate.Addendum{
			Layer:     b.base,
			MediaType: types.OCILayer,
			History:   v1.History{Created: created, CreatedBy: "meshplane image-builder: base (CA certificates, nonroot user 65532)"},
		})
	}
	adds = append(adds, mutate.Addendum{
		Layer:     binLayer,
		MediaType: types.OCILayer,
		History:   v1.History{Created: created, CreatedBy: "meshplane image-builder: " + entrypoint},
	})
	if img, err = mutate.Append(img, adds...); err != nil {
		return nil, fmt.Errorf("image %s: %w", name, err)
	}
	return &Image{
		Name:  name,
		Ref:   fmt.Sprintf("%s/%s:%s", b.opts.Registry, name, b.opts.Version),
		Tag:   b.opts.Version,
		Arch:  arch,
		Image: img,
	}, nil
}
