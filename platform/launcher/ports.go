package launcher

import (
	"fmt"
	"net"
	"strconv"
)

// PortRange is how many ports, from the base, a platform of one or two
// shards may open.
const PortRange = 20

// ExtendedPortRange is how many ports a platform of three or four shards
// may open: PortRange and an extension, PORT_BASE+20..+29, holding shards
// c (20..22) and d (23..25); 26..29 stay free.
const ExtendedPortRange = 30

// Span is how many ports, from the base, a platform of shards shards opens.
func Span(shards int) int {
	if shards > 2 {
		return ExtendedPortRange
	}
	return PortRange
}

// DefaultPortBase keeps the core on kcp's port, 6443.
const DefaultPortBase = 6443

// Ports is the fixed layout of the ports a platform opens, as offsets from
// one base, so copies started with different bases never collide.
// Shards (0 meaning 1) sets the range's length (Span).
type Ports struct {
	Base   int
	Shards int
}

// Last is the range's last port.
func (p Ports) Last() int { return p.Base + Span(p.Shards) - 1 }

// The offsets. Components that come later take the next free ones; every
// offset stays below PortRange.
const (
	offsetCore = iota
	offsetCoreEtcdClient
	offsetCoreEtcdPeer
	offsetAccountOperatorMetrics
	offsetAccountOperatorHealth
	offsetGraphQL
)

// The example providers' offsets (13..15; see docs/examples.md).
const (
	offsetExampleMongoDBHealth  = 13
	offsetExamplePostgresHealth = 14
	offsetExamplePostgres       = 15
)

// Core is the core's secure port.
func (p Ports) Core() int { return p.Base + offsetCore }

// CoreEtcdClient is the embedded etcd's client port.
func (p Ports) CoreEtcdClient() int { return p.Base + offsetCoreEtcdClient }

// CoreEtcdPeer is the embedded etcd's peer port.
func (p Ports) CoreEtcdPeer() int { return p.Base + offsetCoreEtcdPeer }

// GraphQL is the GraphQL gateway's HTTP port.
func (p Ports) GraphQL() int { return p.Base + offsetGraphQL }

// Validate checks that the whole range is a valid port range.
func (p Ports) Validate() error {
	if p.Base < 1024 || p.Last() > 65535 {
		return fmt.Errorf("port base %d: the platform needs ports %d..%d, which must lie in 1024..65535", p.Base, p.Base, p.Last())
	}
	return nil
}

// CheckFree reports the first port of the range that is already taken on
// the loopback address, so a second copy started on the same base fails
// with a clear message before anything starts.
func (p Ports) CheckFree() error {
	for port := p.Base; port <= p.Last(); port++ {
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			return fmt.Errorf("port %d (of the platform's range %d..%d) is in use: choose another PORT_BASE or stop what holds it: %w", port, p.Base, p.Last(), err)
		}
		l.Close()
	}
	return nil
}

// AccountOperatorMetrics is the account-operator's /metrics port.
func (p Ports) AccountOperatorMetrics() int { return p.Base + offsetAccountOperatorMetrics }

// AccountOperatorHealth is the account-operator's /healthz and /readyz port.
func (p Ports) AccountOperatorHealth() int { return p.Base + offsetAccountOperatorHealth }

// ExampleMongoDBHealth is the mongodb example provider's /readyz port.
func (p Ports) ExampleMongoDBHealth() int { return p.Base + offsetExampleMongoDBHealth }

// ExamplePostgresHealth is the postgres example provider's /readyz port.
func (p Ports) ExamplePostgresHealth() int { return p.Base + offsetExamplePostgresHealth }

// ExamplePostgres is the PostgreSQL server of the postgres example.
func (p Ports) ExamplePostgres() int { return p.Base + offsetExamplePostgres }
