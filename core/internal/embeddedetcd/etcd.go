// Package embeddedetcd runs an etcd member inside the server process.
package embeddedetcd

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strconv"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.etcd.io/etcd/server/v3/etcdserver/api/v3client"
	"go.etcd.io/etcd/server/v3/storage/wal"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// Server is a running embedded etcd.
type Server struct {
	etcd *embed.Etcd
	// ClientURL is where clients connect (https).
	ClientURL string
	// ClientTLS are the files a client presents and trusts: the client
	// port takes only certificates of the embedded etcd's own CA.
	ClientTLS TLSFiles
}

// Start runs etcd with its data in dir, listening on 127.0.0.1 with TLS on
// both ports and client certificates required (the certificates are made
// once in <dir>/etcd-pki, see ensurePKI): no other local process reads or
// writes the data without them. A positive walSegmentBytes sets the size
// of WAL segment files (etcd preallocates 64 MB each by default).
func Start(dir string, clientPort, peerPort int, walSegmentBytes int64) (*Server, error) {
	serverTLS, clientTLS, err := ensurePKI(dir)
	if err != nil {
		return nil, fmt.Errorf("embedded etcd certificates: %w", err)
	}
	if walSegmentBytes > 0 {
		wal.SegmentSizeBytes = walSegmentBytes
	}
	cfg := embed.NewConfig()
	cfg.Name = "meshplane"
	cfg.Dir = filepath.Join(dir, "etcd")
	// etcd logs every listener it closes on shutdown as an error; only
	// fatal problems are worth a line in the server's log.
	cfg.LogLevel = zapcore.FatalLevel.String()
	// etcd's own logger samples repeated lines, and its sampler keeps
	// counters of about 1 MiB; at the fatal level there is nothing to sample.
	logCfg := zap.NewProductionConfig()
	logCfg.Level = zap.NewAtomicLevelAt(zapcore.FatalLevel)
	logCfg.Sampling = nil
	logger, err := logCfg.Build()
	if err != nil {
		return nil, fmt.Errorf("embedded etcd logger: %w", err)
	}
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(logger)
	client := mustURL("https://127.0.0.1:" + strconv.Itoa(clientPort))
	peer := mustURL("https://127.0.0.1:" + strconv.Itoa(peerPort))
	tlsInfo := transport.TLSInfo{CertFile: serverTLS.CertFile, KeyFile: serverTLS.KeyFile,
		TrustedCAFile: serverTLS.CAFile, ClientCertAuth: true}
	cfg.ClientTLSInfo, cfg.PeerTLSInfo = tlsInfo, tlsInfo
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{client}, []url.URL{client}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{peer}, []url.URL{peer}
	cfg.InitialCluster = cfg.Name + "=" + peer.String()
	cfg.QuotaBackendBytes = 8 * 1024 * 1024 * 1024
	cfg.MaxRequestBytes = 3 * 1024 * 1024
	cfg.SnapshotCount = 10000
	// etcd's JSON gateway (/v3/kv/... over HTTP) dials a gRPC client to
	// its own port; nothing here speaks JSON to etcd (clients and etcdctl
	// use gRPC), so neither the connection nor its handlers are made.
	cfg.EnableGRPCGateway = false
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, fmt.Errorf("starting embedded etcd in %s: %w", cfg.Dir, err)
	}
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		e.Close()
		return nil, fmt.Errorf("embedded etcd failed: %w", err)
	case <-time.After(60 * time.Second):
		e.Close()
		return nil, fmt.Errorf("embedded etcd not ready after 60s")
	}
	return &Server{etcd: e, ClientURL: client.String(), ClientTLS: clientTLS}, nil
}

// InProcessClient is a client calling the member's gRPC services as
// functions (no socket, no HTTP/2, no protobuf framing).
func (s *Server) InProcessClient() *clientv3.Client { return v3client.New(s.etcd.Server) }

// Close stops etcd.
func (s *Server) Close() { s.etcd.Close() }

func mustURL(s string) url.URL {
	u, err := url.Parse(s)
	if err != nil {
		panic(err)
	}
	return *u
}
