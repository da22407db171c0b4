package server

import (
	"crypto/tls"
	"fmt"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"

	"github.com/meshplane/meshplane/core/internal/embeddedetcd"
	"github.com/meshplane/meshplane/core/internal/server/options"
	"github.com/meshplane/meshplane/core/internal/storage/clusterstore"
)

// storageStage is the running etcd (embedded unless --etcd-servers) and
// the one connection every registry shares.
type storageStage struct {
	etcd    *embeddedetcd.Server
	backend *clusterstore.Backend
}

func startStorage(opts *options.Completed) (*storageStage, error) {
	s := &storageStage{}
	endpoints := opts.EtcdServers
	if len(endpoints) == 0 {
		e, err := embeddedetcd.Start(opts.RootDirectory, opts.EmbeddedEtcdClientPort, opts.EmbeddedEtcdPeerPort, opts.EmbeddedEtcdWALSizeBytes)
		if err != nil {
			return nil, err
		}
		s.etcd = e
		endpoints = []string{e.ClientURL}
	}
	if s.etcd != nil && opts.EmbeddedEtcdInProcessClient {
		backend, err := clusterstore.NewBackendWithInProcessKV(s.etcd.InProcessClient(), endpoints, "/registry", 5*time.Minute)
		if err != nil {
			s.close()
			return nil, err
		}
		s.backend = backend
		return s, nil
	}
	tlsConfig, err := etcdTLS(opts)
	if err != nil {
		s.close()
		return nil, err
	}
	backend, err := clusterstore.NewBackend(endpoints, "/registry", 5*time.Minute, tlsConfig)
	if err != nil {
		s.close()
		return nil, err
	}
	s.backend = backend
	return s, nil
}

// etcdTLS is the client TLS of an external etcd (nil without the flags).
func etcdTLS(opts *options.Completed) (*tls.Config, error) {
	if opts.EtcdCAFile == "" && opts.EtcdCertFile == "" {
		return nil, nil
	}
	info := transport.TLSInfo{CertFile: opts.EtcdCertFile, KeyFile: opts.EtcdKeyFile, TrustedCAFile: opts.EtcdCAFile}
	c, err := info.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("etcd TLS: %w", err)
	}
	return c, nil
}

func (s *storageStage) close() {
	if s.backend != nil {
		_ = s.backend.Close()
		s.backend = nil
	}
	if s.etcd != nil {
		s.etcd.Close()
		s.etcd = nil
	}
}
