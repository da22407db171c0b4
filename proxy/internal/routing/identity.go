package routing

import (
	"crypto/tls"
	"net/http"
	"strings"
)

// The identity headers shards believe from the proxy's client certificate
// (kube-apiserver's request-header defaults).
const (
	userHeader   = "X-Remote-User"
	groupHeader  = "X-Remote-Group"
	remotePrefix = "X-Remote-"
	// mastersGroup is never forwarded: a client certificate of the proxy's
	// CA cannot make anyone a shard's system:masters.
	mastersGroup = "system:masters"
)

// User is a caller the proxy authenticated itself.
type User struct {
	Name   string
	Groups []string
}

// certUser is the user of a verified client certificate: CN is the name,
// O the groups (as kube-apiserver reads them).
func certUser(state *tls.ConnectionState) (User, bool) {
	if state == nil || len(state.VerifiedChains) == 0 || len(state.VerifiedChains[0]) == 0 {
		return User{}, false
	}
	leaf := state.VerifiedChains[0][0]
	if leaf.Subject.CommonName == "" {
		return User{}, false
	}
	u := User{Name: leaf.Subject.CommonName}
	for _, g := range leaf.Subject.Organization {
		if g != mastersGroup {
			u.Groups = append(u.Groups, g)
		}
	}
	return u, true
}

// scrub removes what a client must not send to a shard through the proxy:
// identity headers (only the proxy sets them) and forwarding headers
// (the proxy sets its own). Impersonate-* headers stay: the shard
// authorizes impersonation for the authenticated user as it always does.
func scrub(h http.Header) {
	for k := range h {
		c := http.CanonicalHeaderKey(k)
		if strings.HasPrefix(c, remotePrefix) || strings.HasPrefix(c, "X-Forwarded-") || c == "Forwarded" {
			h.Del(k)
		}
	}
}

// setIdentity puts u in the identity headers, replacing the caller's own
// credentials.
func setIdentity(h http.Header, u User) {
	h.Del("Authorization")
	h.Set(userHeader, u.Name)
	for _, g := range u.Groups {
		h.Add(groupHeader, g)
	}
}
