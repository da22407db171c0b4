// Command member is one etcd cluster member for the tests of an external
// etcd: etcd's embed package in a process of its own, TLS on client and
// peer URLs with client certificates required. It runs until SIGTERM.
package main

import (
	"flag"
	"fmt"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"go.etcd.io/etcd/server/v3/embed"
)

func main() {
	var (
		name     = flag.String("name", "", "member name")
		dir      = flag.String("data-dir", "", "data directory")
		client   = flag.String("client-url", "", "https client URL")
		peer     = flag.String("peer-url", "", "https peer URL")
		cluster  = flag.String("initial-cluster", "", "name=peer-url,... of every member")
		cert     = flag.String("cert-file", "", "serving (and peer client) certificate")
		key      = flag.String("key-file", "", "key of --cert-file")
		ca       = flag.String("trusted-ca-file", "", "CA of clients and peers")
		logLevel = flag.String("log-level", "warn", "etcd's log level")
	)
	flag.Parse()
	if err := run(*name, *dir, *client, *peer, *cluster, *cert, *key, *ca, *logLevel); err != nil {
		fmt.Fprintln(os.Stderr, "member:", err)
		os.Exit(1)
	}
}

func run(name, dir, client, peer, cluster, cert, key, ca, logLevel string) error {
	cu, err := url.Parse(client)
	if err != nil {
		return err
	}
	pu, err := url.Parse(peer)
	if err != nil {
		return err
	}
	cfg := embed.NewConfig()
	cfg.Name, cfg.Dir, cfg.LogLevel = name, dir, logLevel
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{*cu}, []url.URL{*cu}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{*pu}, []url.URL{*pu}
	cfg.InitialCluster = cluster
	cfg.InitialClusterToken = "meshplane-test"
	if !strings.Contains(cluster, name+"=") {
		return fmt.Errorf("--initial-cluster does not name %s", name)
	}
	tls := func(info *embed.Config) {
		info.ClientTLSInfo.CertFile, info.ClientTLSInfo.KeyFile, info.ClientTLSInfo.TrustedCAFile = cert, key, ca
		info.ClientTLSInfo.ClientCertAuth = true
		info.PeerTLSInfo.CertFile, info.PeerTLSInfo.KeyFile, info.PeerTLSInfo.TrustedCAFile = cert, key, ca
		info.PeerTLSInfo.ClientCertAuth = true
	}
	tls(cfg)
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return err
	}
	defer e.Close()
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, os.Interrupt)
	select {
	case <-e.Server.ReadyNotify():
		fmt.Println("ready")
	case err := <-e.Err():
		return err
	case <-stop:
		return nil
	}
	select {
	case err := <-e.Err():
		return err
	case <-stop:
		return nil
	}
}
