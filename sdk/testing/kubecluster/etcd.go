package kubecluster

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
)

// startEtcd runs etcd's embed package in this process, its client URL on
// 127.0.0.1 (plain HTTP: nothing but the API server on this host reaches it).
func (c *Cluster) startEtcd(ctx context.Context) error {
	clientPort, err := freePort()
	if err != nil {
		return err
	}
	peerPort, err := freePort()
	if err != nil {
		return err
	}
	cu := url.URL{Scheme: "http", Host: "127.0.0.1:" + strconv.Itoa(clientPort)}
	pu := url.URL{Scheme: "http", Host: "127.0.0.1:" + strconv.Itoa(peerPort)}
	if err := os.MkdirAll(c.path("logs"), 0o755); err != nil {
		return err
	}
	cfg := embed.NewConfig()
	cfg.Name, cfg.Dir = "kubecluster", c.path("etcd")
	cfg.LogLevel, cfg.LogOutputs = "warn", []string{c.path("logs", "etcd.log")}
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{cu}, []url.URL{cu}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{pu}, []url.URL{pu}
	cfg.InitialCluster = cfg.Name + "=" + pu.String()
	cfg.ListenMetricsUrls = nil
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return err
	}
	c.etcd = e
	select {
	case <-e.Server.ReadyNotify():
		return nil
	case err := <-e.Err():
		return err
	case <-time.After(time.Minute):
		return fmt.Errorf("etcd not ready within a minute")
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (c *Cluster) etcdURL() string { return c.etcd.Config().ListenClientUrls[0].String() }
