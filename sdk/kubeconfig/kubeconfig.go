// Package kubeconfig derives kubeconfig files from others: the same
// credentials with another current context, or every server moved onto
// another endpoint (a front proxy).
package kubeconfig

import (
	"fmt"
	"net/url"

	"k8s.io/client-go/tools/clientcmd"
)

// WithContext copies the kubeconfig from to to, with context as the
// current context; it fails when from has no such context.
func WithContext(from, context, to string) error {
	cfg, err := clientcmd.LoadFromFile(from)
	if err != nil {
		return err
	}
	if _, ok := cfg.Contexts[context]; !ok {
		return fmt.Errorf("%s has no context %s", from, context)
	}
	cfg.CurrentContext = context
	return clientcmd.WriteToFile(*cfg, to)
}

// Rehosted copies the kubeconfig from to to with the scheme and host of
// every cluster's server replaced by those of endpoint (paths such as
// /clusters/root are kept), trusting the PEM certificates in ca.
func Rehosted(from, endpoint string, ca []byte, to string) error {
	cfg, err := clientcmd.LoadFromFile(from)
	if err != nil {
		return err
	}
	e, err := url.Parse(endpoint)
	if err != nil {
		return fmt.Errorf("endpoint %q: %w", endpoint, err)
	}
	for name, c := range cfg.Clusters {
		u, err := url.Parse(c.Server)
		if err != nil {
			return fmt.Errorf("cluster %s of %s: %w", name, from, err)
		}
		u.Scheme, u.Host = e.Scheme, e.Host
		c.Server = u.String()
		c.CertificateAuthority, c.CertificateAuthorityData = "", ca
	}
	return clientcmd.WriteToFile(*cfg, to)
}
