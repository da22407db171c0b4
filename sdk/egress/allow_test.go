package egress

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"testing"
)

func TestAllowList(t *testing.T) {
	own := []netip.AddrPort{netip.MustParseAddrPort("127.0.0.1:6443"), netip.MustParseAddrPort("0.0.0.0:2379")}
	for _, tc := range []struct {
		name    string
		entries []string
		host    string
		addr    string
		allowed bool
	}{
		{"empty list", nil, "10.0.0.1", "10.0.0.1:443", false},
		{"address, any port", []string{"10.0.0.1"}, "10.0.0.1", "10.0.0.1:8443", true},
		{"another address", []string{"10.0.0.1"}, "10.0.0.2", "10.0.0.2:8443", false},
		{"address and port", []string{"10.0.0.1:8443"}, "10.0.0.1", "10.0.0.1:8443", true},
		{"address, other port", []string{"10.0.0.1:8443"}, "10.0.0.1", "10.0.0.1:8080", false},
		{"CIDR", []string{"10.0.0.0/8"}, "10.9.8.7", "10.9.8.7:443", true},
		{"IPv6 with port", []string{"[fd00::1]:443"}, "fd00::1", "[fd00::1]:443", true},
		{"IPv4-mapped IPv6 is its IPv4 address", []string{"10.0.0.1"}, "::ffff:10.0.0.1", "[::ffff:10.0.0.1]:443", true},
		{"loopback named explicitly", []string{"127.0.0.1:9443"}, "127.0.0.1", "127.0.0.1:9443", true},
		{"loopback, other port", []string{"127.0.0.1:9443"}, "127.0.0.1", "127.0.0.1:8081", false},
		{"loopback range named", []string{"127.0.0.0/8"}, "127.0.0.1", "127.0.0.1:8081", true},
		{"loopback under 0.0.0.0/0", []string{"0.0.0.0/0"}, "127.0.0.1", "127.0.0.1:8081", false},
		{"public under 0.0.0.0/0", []string{"0.0.0.0/0"}, "203.0.113.9", "203.0.113.9:443", true},
		{"IPv6 loopback under ::/0", []string{"::/0"}, "::1", "[::1]:8081", false},
		{"mapped loopback under 0.0.0.0/0", []string{"0.0.0.0/0"}, "::ffff:127.0.0.1", "[::ffff:127.0.0.1]:8081", false},
		{"link-local metadata under 0.0.0.0/0", []string{"0.0.0.0/0"}, "169.254.169.254", "169.254.169.254:80", false},
		{"link-local named", []string{"169.254.169.254"}, "169.254.169.254", "169.254.169.254:80", true},
		{"zoned link-local under ::/0", []string{"::/0"}, "fe80::1", "[fe80::1%eth0]:80", false},
		{"unspecified under 0.0.0.0/0", []string{"0.0.0.0/0"}, "0.0.0.0", "0.0.0.0:80", false},
		{"own port under the loopback range", []string{"127.0.0.0/8"}, "127.0.0.1", "127.0.0.1:6443", false},
		{"own port under the loopback address", []string{"127.0.0.1"}, "127.0.0.1", "127.0.0.1:6443", false},
		{"own port named with its port", []string{"127.0.0.1:6443"}, "127.0.0.1", "127.0.0.1:6443", true},
		{"own port of an unspecified bind", []string{"127.0.0.1"}, "127.0.0.1", "127.0.0.1:2379", false},
		{"host name", []string{"mounts.example.com"}, "mounts.example.com", "203.0.113.9:443", true},
		{"host name, case and trailing dot", []string{"Mounts.Example.com"}, "mounts.example.com.", "203.0.113.9:443", true},
		{"host name with port", []string{"mounts.example.com:8443"}, "mounts.example.com", "203.0.113.9:443", false},
		{"host name resolving to loopback", []string{"mounts.example.com"}, "mounts.example.com", "127.0.0.1:2379", false},
		{"host name resolving to link-local", []string{"mounts.example.com"}, "mounts.example.com", "169.254.169.254:80", false},
		{"localhost is no loopback entry", []string{"localhost"}, "localhost", "127.0.0.1:8081", false},
		{"wildcard subdomain", []string{"*.example.com"}, "a.b.example.com", "203.0.113.9:443", true},
		{"wildcard is not the domain", []string{"*.example.com"}, "example.com", "203.0.113.9:443", false},
		{"wildcard is no suffix match", []string{"*.example.com"}, "evilexample.com", "203.0.113.9:443", false},
		{"private address under a host name", []string{"mounts.example.com"}, "mounts.example.com", "10.0.0.5:443", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := ParseAllowList("--allowed", tc.entries)
			if err != nil {
				t.Fatal(err)
			}
			l.Reserved = own
			err = l.Check(tc.host, netip.MustParseAddrPort(tc.addr))
			if got := err == nil; got != tc.allowed {
				t.Errorf("Check(%q, %s) with %v: allowed=%v (%v), want %v", tc.host, tc.addr, tc.entries, got, err, tc.allowed)
			}
		})
	}
}

func TestParseAllowListRefusesBadEntries(t *testing.T) {
	for _, e := range []string{"10.0.0.1:0", "10.0.0.1:70000", "host:port", "exa mple.com", "-bad.com", "http://example.com", "a..b"} {
		if _, err := ParseAllowList("--allowed", []string{e}); err == nil {
			t.Errorf("ParseAllowList(%q): want an error", e)
		}
	}
}

// TestDialContext dials a real listener on loopback: refused before any
// connection when the list does not name it, by name or by address,
// connected when it does.
func TestDialContext(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan struct{}, 10)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- struct{}{}
			c.Close()
		}
	}()
	addr := ln.Addr().(*net.TCPAddr)
	for _, tc := range []struct {
		entries []string
		dial    string
		ok      bool
	}{
		{nil, addr.String(), false},
		{[]string{"0.0.0.0/0"}, addr.String(), false},
		{[]string{"localhost"}, fmt.Sprintf("localhost:%d", addr.Port), false},
		{[]string{fmt.Sprintf("127.0.0.1:%d", addr.Port+1)}, addr.String(), false},
		{[]string{addr.String()}, addr.String(), true},
		{[]string{addr.String()}, fmt.Sprintf("localhost:%d", addr.Port), true}, // the address dialled decides
	} {
		l, err := ParseAllowList("--allowed", tc.entries)
		if err != nil {
			t.Fatal(err)
		}
		c, err := l.DialContext(context.Background(), "tcp", tc.dial)
		if tc.ok {
			if err != nil {
				t.Errorf("dial %s with %v: %v, want a connection", tc.dial, tc.entries, err)
				continue
			}
			c.Close()
			<-accepted
			continue
		}
		if err == nil {
			c.Close()
			t.Errorf("dial %s with %v: connected, want refused", tc.dial, tc.entries)
		} else if !errors.Is(err, ErrNotAllowed) {
			t.Errorf("dial %s with %v: %v, want ErrNotAllowed", tc.dial, tc.entries, err)
		}
	}
	if n := len(accepted); n != 0 {
		t.Errorf("%d connections reached the listener beyond the allowed ones", n)
	}
}

func TestParseReserved(t *testing.T) {
	got, err := ParseReserved("--reserved", []string{"127.0.0.1:6443-6445", "[::1]:80", " "})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"127.0.0.1:6443", "127.0.0.1:6444", "127.0.0.1:6445", "[::1]:80"}
	if len(got) != len(want) {
		t.Fatalf("ParseReserved: %v, want %v", got, want)
	}
	for i := range want {
		if got[i].String() != want[i] {
			t.Errorf("ParseReserved[%d] = %s, want %s", i, got[i], want[i])
		}
	}
	for _, bad := range []string{"127.0.0.1", "127.0.0.1:0", "127.0.0.1:9-8", "host:80", "127.0.0.1:1-70000"} {
		if _, err := ParseReserved("--reserved", []string{bad}); err == nil {
			t.Errorf("ParseReserved(%q): want an error", bad)
		}
	}
	// A reserved address is refused under its range and opens only to an
	// entry with its port.
	l, _ := ParseAllowList("--allowed", []string{"127.0.0.0/8", "127.0.0.1:6444"})
	l.Reserved = got
	if err := l.Check("127.0.0.1", netip.MustParseAddrPort("127.0.0.1:6443")); err == nil {
		t.Error("a reserved port under 127.0.0.0/8 was allowed")
	}
	if err := l.Check("127.0.0.1", netip.MustParseAddrPort("127.0.0.1:6444")); err != nil {
		t.Errorf("a reserved port named with its port was refused: %v", err)
	}
}
