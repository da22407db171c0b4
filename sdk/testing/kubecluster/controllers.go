package kubecluster

import (
	"context"
	"strconv"
)

// startControllers runs kube-controller-manager and kube-scheduler, each
// with its own identity, serving only on 127.0.0.1, no leader election.
func (c *Cluster) startControllers(context.Context) error {
	cmPort, err := freePort()
	if err != nil {
		return err
	}
	_, err = c.run("kube-controller-manager", c.bin.controllerManager,
		"--kubeconfig="+c.certs.controllerManager,
		"--authentication-kubeconfig="+c.certs.controllerManager,
		"--authorization-kubeconfig="+c.certs.controllerManager,
		"--bind-address=127.0.0.1",
		"--secure-port="+strconv.Itoa(cmPort),
		"--cert-dir="+c.path("pki", "controller-manager"),
		"--leader-elect=false",
		"--use-service-account-credentials=true",
		"--service-account-private-key-file="+c.certs.saKey,
		"--root-ca-file="+c.certs.ca.CertFile,
		"--service-cluster-ip-range="+serviceCIDR,
		"--cluster-cidr="+clusterCIDR,
		"--allocate-node-cidrs=false",
		"--profiling=false",
		"--v=1",
	)
	if err != nil {
		return err
	}
	schedPort, err := freePort()
	if err != nil {
		return err
	}
	_, err = c.run("kube-scheduler", c.bin.scheduler,
		"--kubeconfig="+c.certs.scheduler,
		"--authentication-kubeconfig="+c.certs.scheduler,
		"--authorization-kubeconfig="+c.certs.scheduler,
		"--bind-address=127.0.0.1",
		"--secure-port="+strconv.Itoa(schedPort),
		"--cert-dir="+c.path("pki", "scheduler"),
		"--leader-elect=false",
		"--profiling=false",
		"--v=1",
	)
	return err
}
