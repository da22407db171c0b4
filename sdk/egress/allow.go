// Package egress decides where a server may connect on behalf of what a
// tenant wrote (a mount's URL, a kubeconfig's server): an allow-list
// checked on the address actually dialled, with loopback, link-local and
// the server's own listening addresses refused unless named explicitly.
package egress

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// ErrNotAllowed is why a connection to a destination the allow-list does
// not name is not made. Tenants should not see it: every failure to reach
// a destination should answer the same, so a tenant cannot probe the
// network behind the server.
var ErrNotAllowed = errors.New("the destination is not on the allow-list")

// AllowList says where connections may go: only to a host or resolved
// address on the list. It is checked when connecting, on the address
// actually dialled (DialContext), so a host name that resolves elsewhere
// (DNS rebinding) gains nothing.
//
// Entries:
//
//	10.1.2.3, 10.0.0.0/8, fd00::/8     addresses, any port
//	10.1.2.3:8443, [fd00::1]:8443      one address and port
//	mounts.example.com[:port]          a host name, as written in the URL
//	*.mounts.example.com[:port]        its subdomains
//
// Loopback, link-local, unspecified and multicast addresses, and the
// server's own listening addresses (Reserved), are refused even when an
// entry covers them, unless an address entry names them explicitly: a
// prefix lying wholly in such a range (127.0.0.1, 127.0.0.0/8,
// 169.254.169.254) opens it, 0.0.0.0/0 or a host name does not; an own
// listening address opens only to an entry with its exact port. An empty
// list allows nothing.
type AllowList struct {
	prefixes []allowedPrefix
	hosts    []allowedHost
	// Reserved are the platform's own listening addresses (the core's
	// port, etcd's); an unspecified address (0.0.0.0) stands for every
	// local address.
	Reserved []netip.AddrPort
}

type allowedPrefix struct {
	prefix netip.Prefix
	port   int // 0: any
}

type allowedHost struct {
	name     string // lower case, no trailing dot
	wildcard bool   // *.name: subdomains of name
	port     int
}

// special are the ranges an entry must name explicitly.
var special = []netip.Prefix{
	netip.MustParsePrefix("127.0.0.0/8"),
	netip.MustParsePrefix("::1/128"),
	netip.MustParsePrefix("169.254.0.0/16"),
	netip.MustParsePrefix("fe80::/10"),
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("::/128"),
	netip.MustParsePrefix("224.0.0.0/4"),
	netip.MustParsePrefix("ff00::/8"),
	netip.MustParsePrefix("255.255.255.255/32"),
}

// ParseAllowList reads allow-list entries; flag names the flag they come
// from, for the errors.
func ParseAllowList(flag string, entries []string) (*AllowList, error) {
	l := &AllowList{}
	var errs []error
	for _, e := range entries {
		if e = strings.TrimSpace(e); e == "" {
			continue
		}
		if err := l.add(e); err != nil {
			errs = append(errs, fmt.Errorf("%s %q: %w", flag, e, err))
		}
	}
	return l, errors.Join(errs...)
}

func (l *AllowList) add(e string) error {
	if p, err := netip.ParsePrefix(e); err == nil {
		l.prefixes = append(l.prefixes, allowedPrefix{prefix: unmapPrefix(p).Masked()})
		return nil
	}
	if a, err := netip.ParseAddr(e); err == nil {
		a = a.Unmap()
		l.prefixes = append(l.prefixes, allowedPrefix{prefix: netip.PrefixFrom(a, a.BitLen())})
		return nil
	}
	host, port := e, 0
	if h, p, err := net.SplitHostPort(e); err == nil {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return fmt.Errorf("port %q is not a port (1-65535)", p)
		}
		host, port = h, n
	}
	if a, err := netip.ParseAddr(host); err == nil {
		a = a.Unmap()
		l.prefixes = append(l.prefixes, allowedPrefix{prefix: netip.PrefixFrom(a, a.BitLen()), port: port})
		return nil
	}
	h := allowedHost{name: strings.TrimSuffix(strings.ToLower(host), "."), port: port}
	if rest, ok := strings.CutPrefix(h.name, "*."); ok {
		h.name, h.wildcard = rest, true
	}
	if !validHostName(h.name) {
		return errors.New("want an IP address, a CIDR, or a host name, each with an optional :port")
	}
	l.hosts = append(l.hosts, h)
	return nil
}

func unmapPrefix(p netip.Prefix) netip.Prefix {
	if !p.Addr().Is4In6() {
		return p
	}
	bits := p.Bits() - 96
	if bits < 0 {
		bits = 0
	}
	return netip.PrefixFrom(p.Addr().Unmap(), bits)
}

func validHostName(h string) bool {
	if h == "" || len(h) > 253 {
		return false
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}

// Check decides a connection to addr (the address dialled) for a URL
// whose host is host (a name or an address, without port).
func (l *AllowList) Check(host string, addr netip.AddrPort) error {
	ip, port := addr.Addr().Unmap().WithZone(""), int(addr.Port())
	reserved, special := l.reserved(ip, port), isSpecial(ip)
	for _, p := range l.prefixes {
		if p.permits(ip, port, reserved, special) {
			return nil
		}
	}
	// A host name never opens a special or reserved address, whatever it
	// resolves to.
	if !reserved && !special && l.hostListed(host, port) {
		return nil
	}
	return ErrNotAllowed
}

// permits reports whether the entry opens ip:port: a reserved address
// only to an entry with its port, a special one only to an entry wholly
// inside a special range.
func (p allowedPrefix) permits(ip netip.Addr, port int, reserved, special bool) bool {
	if p.port != 0 && p.port != port || !p.prefix.Contains(ip) {
		return false
	}
	switch {
	case reserved:
		return p.port == port
	case special:
		return isSpecialPrefix(p.prefix)
	}
	return true
}

func (l *AllowList) hostListed(host string, port int) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	for _, h := range l.hosts {
		if h.port != 0 && h.port != port {
			continue
		}
		if host == h.name && !h.wildcard || h.wildcard && strings.HasSuffix(host, "."+h.name) {
			return true
		}
	}
	return false
}

// reserved reports whether ip:port is one of the platform's own listening
// addresses.
func (l *AllowList) reserved(ip netip.Addr, port int) bool {
	for _, r := range l.Reserved {
		if int(r.Port()) != port {
			continue
		}
		if r.Addr() == ip.Unmap() || r.Addr().IsUnspecified() && isLocal(ip) {
			return true
		}
	}
	return false
}

func isSpecial(ip netip.Addr) bool {
	for _, s := range special {
		if s.Contains(ip) {
			return true
		}
	}
	return false
}

// isSpecialPrefix reports whether p lies wholly in one special range.
func isSpecialPrefix(p netip.Prefix) bool {
	for _, s := range special {
		if s.Contains(p.Addr()) && p.Bits() >= s.Bits() {
			return true
		}
	}
	return false
}

// isLocal reports whether ip is an address of this machine.
func isLocal(ip netip.Addr) bool {
	if ip.IsLoopback() || ip.IsUnspecified() {
		return true
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return false
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok {
			if local, ok := netip.AddrFromSlice(n.IP); ok && local.Unmap() == ip {
				return true
			}
		}
	}
	return false
}

// DialContext dials only addresses l permits, checked on the address each
// connection attempt goes to, after name resolution. A nil list permits
// nothing.
func (l *AllowList) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	if l == nil {
		l = &AllowList{}
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second,
		Control: func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return ErrNotAllowed
			}
			return l.Check(host, ap)
		}}
	return d.DialContext(ctx, network, addr)
}

// ParseReserved reads listening addresses to refuse besides a server's
// own: ip:port or ip:first-last ([ipv6]:port for IPv6).
func ParseReserved(flag string, entries []string) ([]netip.AddrPort, error) {
	var out []netip.AddrPort
	var errs []error
	for _, e := range entries {
		if e = strings.TrimSpace(e); e == "" {
			continue
		}
		host, ports, err := net.SplitHostPort(e)
		ip, ipErr := netip.ParseAddr(host)
		if err != nil || ipErr != nil {
			errs = append(errs, fmt.Errorf("%s %q: want ip:port or ip:first-last", flag, e))
			continue
		}
		lo, hi, isRange := strings.Cut(ports, "-")
		if !isRange {
			hi = lo
		}
		first, err1 := strconv.Atoi(lo)
		last, err2 := strconv.Atoi(hi)
		if err1 != nil || err2 != nil || first < 1 || last > 65535 || first > last {
			errs = append(errs, fmt.Errorf("%s %q: ports must be 1-65535, first <= last", flag, e))
			continue
		}
		for p := first; p <= last; p++ {
			out = append(out, netip.AddrPortFrom(ip.Unmap().WithZone(""), uint16(p)))
		}
	}
	return out, errors.Join(errs...)
}
