package mounts

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/meshplane/meshplane/sdk/egress"
)

// TransportOptions say how the core talks to mount servers.
type TransportOptions struct {
	// CAFiles are PEM bundles trusted besides the system's roots; they are
	// read again when they change, so a mount server's CA can be added
	// while the core runs.
	CAFiles []string
	// ClientCertFile and ClientKeyFile, when set, are the client
	// certificate the core presents, so a mount server can tell the core's
	// requests (and the X-Remote-* identity headers in them) from others.
	ClientCertFile, ClientKeyFile string
	// Allow says where mount servers may be; nil allows nothing.
	Allow *egress.AllowList
}

// NewTransport returns the transport to mount servers.
func NewTransport(o TransportOptions) (http.RoundTripper, error) {
	roots := &rootPool{files: o.CAFiles, seen: map[string]fileVersion{}}
	cfg := &tls.Config{
		MinVersion: tls.VersionTLS12,
		// The chain is verified in VerifyConnection against roots that
		// may change; Go's own verification would pin them at start.
		InsecureSkipVerify: true, //nolint:gosec // verified below
		VerifyConnection:   roots.verify,
	}
	if o.ClientCertFile != "" {
		cert, err := tls.LoadX509KeyPair(o.ClientCertFile, o.ClientKeyFile)
		if err != nil {
			return nil, fmt.Errorf("loading the mount client certificate: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.TLSClientConfig = cfg
	// A proxy from the environment would be dialled instead of the mount
	// server, out of the allow-list's sight.
	t.Proxy = nil
	t.DialContext = o.Allow.DialContext
	t.MaxIdleConnsPerHost = 100
	return t, nil
}

// fileVersion tells a changed file: modification time and size (a
// rewrite within one timestamp tick still changes the size, mostly).
type fileVersion struct {
	mod  time.Time
	size int64
}

// rootPool is the system's roots plus the CA files, re-read when a
// file's modification time or size changes.
type rootPool struct {
	files []string
	mu    sync.Mutex
	seen  map[string]fileVersion
	pool  *x509.CertPool
}

func (p *rootPool) get() *x509.CertPool {
	p.mu.Lock()
	defer p.mu.Unlock()
	changed := p.pool == nil
	for _, f := range p.files {
		st, err := os.Stat(f)
		if err == nil && (fileVersion{st.ModTime(), st.Size()}) != p.seen[f] {
			changed = true
		}
	}
	if !changed {
		return p.pool
	}
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	for _, f := range p.files {
		st, err := os.Stat(f)
		if err != nil {
			continue
		}
		if pem, err := os.ReadFile(f); err == nil {
			pool.AppendCertsFromPEM(pem)
			p.seen[f] = fileVersion{st.ModTime(), st.Size()}
		}
	}
	p.pool = pool
	return pool
}

func (p *rootPool) verify(cs tls.ConnectionState) error {
	if len(cs.PeerCertificates) == 0 {
		return errors.New("the mount server sent no certificate")
	}
	inter := x509.NewCertPool()
	for _, c := range cs.PeerCertificates[1:] {
		inter.AddCert(c)
	}
	_, err := cs.PeerCertificates[0].Verify(x509.VerifyOptions{Roots: p.get(), Intermediates: inter, DNSName: cs.ServerName})
	return err
}
