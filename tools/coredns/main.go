// Command coredns is CoreDNS with only the plugins the test cluster's DNS
// uses (sdk/testing/kubecluster): the Service names of cluster.local from the
// kubernetes plugin, everything else forwarded to the host's resolver.
package main

import (
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/bind"
	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/forward"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/loop"
	_ "github.com/coredns/coredns/plugin/ready"
)

func init() {
	// The order plugins handle a query in (CoreDNS's plugin.cfg order).
	dnsserver.Directives = []string{"bind", "ready", "health", "errors", "log", "cache", "kubernetes", "loop", "forward"}
}

func main() { coremain.Run() }
