package clusterstore

import (
	"fmt"
	"io"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
)

// MaxObjectBytes is the largest encoded object the store writes: etcd's
// default --max-request-bytes (1.5 MiB), which kube-apiserver's objects
// are held to by any etcd it runs on. The embedded etcd allows more, so
// without this limit objects kube refuses were stored here.
const MaxObjectBytes = 1536 * 1024

// sizeLimited is a storage codec that refuses to encode an object larger
// than limit bytes with a 413, kube's answer when etcd refuses a request
// as too large; decoding is unchanged.
type sizeLimited struct {
	runtime.Codec
	limit int
}

func limitSize(c runtime.Codec, limit int) runtime.Codec { return sizeLimited{Codec: c, limit: limit} }

func (c sizeLimited) Encode(obj runtime.Object, w io.Writer) error {
	cw := &cappedWriter{w: w, left: c.limit}
	err := c.Codec.Encode(obj, cw)
	if cw.over {
		return apierrors.NewRequestEntityTooLargeError(fmt.Sprintf(
			"etcdserver: request is too large: the object is larger than %d bytes (1.5 MiB) as stored", c.limit))
	}
	return err
}

// cappedWriter passes writes on until more than left bytes were written,
// then fails them.
type cappedWriter struct {
	w    io.Writer
	left int
	over bool
}

func (c *cappedWriter) Write(p []byte) (int, error) {
	if len(p) > c.left {
		c.over = true
		return 0, fmt.Errorf("object larger than the storage limit")
	}
	c.left -= len(p)
	return c.w.Write(p)
}
