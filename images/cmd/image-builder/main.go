// Command image-builder writes an OCI image archive for each static binary
// it is given (bin/images/<name>.tar, the shape `ctr images import` loads)
// and prints each image's reference and digest. No container daemon is
// involved; `make images` runs it.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/meshplane/meshplane/images/builder"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "image-builder:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("image-builder", flag.ContinueOnError)
	registry := fs.String("registry", "ghcr.io/meshplane", "registry and path every reference starts with")
	version := fs.String("version", "", "tag and org.opencontainers.image.version of every image (required)")
	versionFile := fs.String("version-file", "", "read the version from this file (the repository's VERSION)")
	source := fs.String("source", "", "org.opencontainers.image.source label")
	revision := fs.String("revision", "", "org.opencontainers.image.revision label (the git commit)")
	created := fs.Int64("created", sourceDateEpoch(), "creation time of every image and file, in Unix seconds (default $SOURCE_DATE_EPOCH, else 0)")
	caFile := fs.String("ca-certificates", "/etc/ssl/certs/ca-certificates.crt", "PEM bundle for the base layer")
	out := fs.String("out", "bin/images", "directory the archives are written to")
	bare := fs.String("bare", "pause", "comma-separated image names built without the base layer")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: image-builder [flags] <static binary>...")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *versionFile != "" {
		b, err := os.ReadFile(*versionFile)
		if err != nil {
			return err
		}
		*version = strings.TrimSpace(string(b))
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return fmt.Errorf("no binaries given")
	}
	ca, err := os.ReadFile(*caFile)
	if err != nil {
		return fmt.Errorf("reading CA certificates: %w", err)
	}
	b, err := builder.New(builder.Options{
		Registry:       strings.TrimSuffix(*registry, "/"),
		Version:        *version,
		Source:         *source,
		Revision:       *revision,
		Created:        time.Unix(*created, 0).UTC(),
		CACertificates: ca,
	})
	if err != nil {
		return err
	}
	bareNames := map[string]bool{}
	for _, n := range strings.Split(*bare, ",") {
		bareNames[strings.TrimSpace(n)] = true
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	for _, bin := range fs.Args() {
		name := filepath.Base(bin)
		content, err := os.ReadFile(bin)
		if err != nil {
			return err
		}
		img, err := b.Build(name, content, bareNames[name])
		if err != nil {
			return err
		}
		path := filepath.Join(*out, name+".tar")
		desc, err := builder.WriteArchiveFile(path, img)
		if err != nil {
			return err
		}
		st, err := os.Stat(path)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%-55s %s %6.1f MB %s\n", img.Ref, desc.Digest, float64(st.Size())/1e6, path)
	}
	return nil
}

func sourceDateEpoch() int64 {
	v, err := strconv.ParseInt(os.Getenv("SOURCE_DATE_EPOCH"), 10, 64)
	if err != nil {
		return 0
	}
	return v
}
