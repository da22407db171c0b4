package server

import (
	"time"

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
	tlsFiles := embeddedetcd.TLSFiles{CAFile: opts.EtcdCAFile, CertFile: opts.EtcdCertFile, KeyFile: opts.EtcdKeyFile}
	if len(endpoints) == 0 {
		e, err := embeddedetcd.Start(opts.RootDirectory, opts.EmbeddedEtcdClientPort, opts.EmbeddedEtcdPeerPort, opts.EmbeddedEtcdWALSizeBytes)
		if err != nil {
			return nil, err
		}
		s.etcd = e
		endpoints = []string{e.ClientURL}
		// The embedded etcd takes TLS client certificates only, as an
		// external cluster does.
		tlsFiles = e.ClientTLS
	}
	tlsConfig, err := tlsFiles.Config()
	if err != nil {
		s.close()
		return nil, err
	}
	if s.etcd != nil && opts.EmbeddedEtcdInProcessClient {
		backend, err := clusterstore.NewBackendWithInProcessKV(s.etcd.InProcessClient(), endpoints, "/registry", 5*time.Minute, tlsConfig)
		if err != nil {
			s.close()
			return nil, err
		}
		s.backend = backend
		return s, nil
	}
	backend, err := clusterstore.NewBackend(endpoints, "/registry", 5*time.Minute, tlsConfig)
	if err != nil {
		s.close()
		return nil, err
	}
	s.backend = backend
	return s, nil
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
