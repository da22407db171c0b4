package kubecluster

import (
	"context"
	"strconv"
	"time"
)

// startAPIServer runs kube-apiserver on NodeIP (pods reach it through the
// kubernetes Service), Node and RBAC authorization, etcd in this process.
func (c *Cluster) startAPIServer(ctx context.Context) error {
	k := c.certs
	np, err := c.run("kube-apiserver", c.bin.apiserver,
		"--bind-address="+NodeIP,
		"--advertise-address="+NodeIP,
		"--secure-port="+strconv.Itoa(k.apiserverPort),
		"--etcd-servers="+c.etcdURL(),
		"--cert-dir="+c.path("pki", "apiserver"),
		"--tls-cert-file="+k.apiserver.CertFile,
		"--tls-private-key-file="+k.apiserver.KeyFile,
		"--client-ca-file="+k.ca.CertFile,
		"--kubelet-client-certificate="+k.kubeletClient.CertFile,
		"--kubelet-client-key="+k.kubeletClient.KeyFile,
		"--kubelet-certificate-authority="+k.ca.CertFile,
		"--kubelet-preferred-address-types=InternalIP",
		"--service-account-key-file="+k.saPub,
		"--service-account-signing-key-file="+k.saKey,
		"--service-account-issuer=https://kubernetes.default.svc."+ClusterDomain,
		"--service-cluster-ip-range="+serviceCIDR,
		"--authorization-mode=Node,RBAC",
		"--enable-admission-plugins=NodeRestriction",
		"--allow-privileged=true",
		"--profiling=false",
		"--v=1",
	)
	if err != nil {
		return err
	}
	// The bridge carrying NodeIP must exist before the API server binds it.
	return poll(ctx, "kube-apiserver ready", 2*time.Minute, np, func(ctx context.Context) (bool, string, error) {
		body, err := c.client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		if err != nil {
			return false, err.Error() + " " + string(body), nil
		}
		return true, "", nil
	})
}
