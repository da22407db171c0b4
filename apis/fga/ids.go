package fga

import (
	"crypto/sha256"
	"encoding/base32"
	"errors"
	"fmt"
	"strings"
)

// Object and user ids.
//
// An id is "<type>:<segment>/<segment>...": the logical cluster, the
// namespace (namespaced objects only) and the name, each escaped. A byte
// outside [A-Za-z0-9._@+-] becomes "|XX" (its two upper-case hex
// digits), so a segment never contains "/", ":", "#", "*", white space or
// control characters, "|" always starts an escape, and two different
// names never share an id. An id longer than OpenFGA allows keeps its
// start and ends in "*" and 32 base32 characters of the SHA-256 of the
// whole escaped id (160 bits); an id that fits never contains "*". Every
// character used is one OpenFGA's id rule allows
// ([a-zA-Z0-9_|*@.+/-], github.com/openfga/language's RuleID), so the ids
// are valid for its tools too, not only for its server (which would also
// take "%" or "~").
//
// For the names Kubernetes and kcp usually give (DNS names, cluster ids,
// e-mail addresses) nothing is escaped, so the ids of accounts,
// namespaces, cluster-scoped objects, roles and users are Platform Mesh's.
// Namespaced objects differ: Platform Mesh's "<type>:<cluster>/<name>"
// names one object in every namespace of the cluster.

const (
	// MaxObjectLength is OpenFGA's limit for a tuple's object; user ids
	// keep to it too (the server takes 512 characters in a tuple's user,
	// OpenFGA's id rule 256 for any object, users included).
	MaxObjectLength = 256
	// HashMarker starts the hash that ends a shortened id; an id that was
	// not shortened never contains it.
	HashMarker = "*"
	// escapeByte starts an escape.
	escapeByte = '|'
	// hashBytes of the SHA-256 end a shortened id (160 bits).
	hashBytes = 20
)

// hashEncoding is base32 in lower case without padding: 32 characters
// for 20 bytes.
var hashEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

const hexDigits = "0123456789ABCDEF"

// plain reports whether b stands for itself in an id segment.
func plain(b byte) bool {
	return 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9' ||
		b == '-' || b == '.' || b == '_' || b == '@' || b == '+'
}

// EscapeSegment escapes s for one segment of an id: every byte outside
// [A-Za-z0-9._@+-] becomes "|XX".
func EscapeSegment(s string) string {
	n := 0
	for i := 0; i < len(s); i++ {
		if !plain(s[i]) {
			n++
		}
	}
	if n == 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 2*n)
	for i := 0; i < len(s); i++ {
		if c := s[i]; plain(c) {
			b.WriteByte(c)
		} else {
			b.WriteByte(escapeByte)
			b.WriteByte(hexDigits[c>>4])
			b.WriteByte(hexDigits[c&15])
		}
	}
	return b.String()
}

// UnescapeSegment reverses EscapeSegment; it refuses what EscapeSegment
// never produces (a plain byte escaped, lower-case hex, a bare
// separator), so every id has one spelling.
func UnescapeSegment(s string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case plain(c):
			b.WriteByte(c)
		case c == escapeByte && i+2 < len(s):
			hi, lo := strings.IndexByte(hexDigits, s[i+1]), strings.IndexByte(hexDigits, s[i+2])
			if hi < 0 || lo < 0 {
				return "", fmt.Errorf("bad escape %q in %q", s[i:i+3], s)
			}
			v := byte(hi<<4 | lo)
			if plain(v) {
				return "", fmt.Errorf("escape %q of a plain character in %q", s[i:i+3], s)
			}
			b.WriteByte(v)
			i += 2
		default:
			return "", fmt.Errorf("character %q not allowed in id segment %q", c, s)
		}
	}
	return b.String(), nil
}

// joinID is "<typ>:" and the escaped segments joined by "/", shortened
// to at most max characters.
func joinID(typ string, max int, segments ...string) string {
	escaped := make([]string, len(segments))
	for i, s := range segments {
		escaped[i] = EscapeSegment(s)
	}
	return typ + ":" + shortenID(strings.Join(escaped, "/"), max-len(typ)-1)
}

// shortenID returns id when it has at most max characters, else its start
// followed by HashMarker and the hash of the whole id, max characters in
// all.
func shortenID(id string, max int) string {
	if len(id) <= max {
		return id
	}
	sum := sha256.Sum256([]byte(id))
	hash := HashMarker + hashEncoding.EncodeToString(sum[:hashBytes])
	keep := max - len(hash)
	if keep < 0 {
		keep = 0
	}
	return id[:keep] + hash
}

// ObjectID is the OpenFGA object of a Kubernetes object:
// "<type>:<cluster>/<namespace>/<name>" for a namespaced object,
// "<type>:<cluster>/<name>" for a cluster-scoped one (namespace ""), where
// cluster is the logical cluster that holds the object (for an Account:
// the cluster of the workspace the Account object lives in). Every part
// is escaped; an id longer than OpenFGA's 256 characters is shortened
// (see the package's id rules).
func ObjectID(typ, cluster, namespace, name string) string {
	if namespace == "" {
		return joinID(typ, MaxObjectLength, cluster, name)
	}
	return joinID(typ, MaxObjectLength, cluster, namespace, name)
}

// AccountObject is the object of the Account named name held by the
// logical cluster originCluster.
func AccountObject(originCluster, name string) string {
	return ObjectID(AccountType, originCluster, "", name)
}

// NamespaceObject is the object of namespace ns in cluster.
func NamespaceObject(cluster, ns string) string {
	return ObjectID(NamespaceType, cluster, "", ns)
}

// UserID is the OpenFGA user of a Kubernetes user name: "user:<name>",
// escaped like an object's segment (a service account
// "system:serviceaccount:ns:robot" is
// "user:system%3Aserviceaccount%3Ans%3Arobot"; a user named "*" is not
// the wildcard "user:*").
func UserID(username string) string {
	return joinID(UserType, MaxObjectLength, username)
}

// GroupID is the id of a group, escaped like a user's name:
// "group:<name>" ("system:authenticated" is "group:system|3Aauthenticated").
func GroupID(name string) string {
	return joinID(GroupType, MaxObjectLength, name)
}

// GroupMembers is the subject of a grant to a group's members:
// "group:<name>#member".
func GroupMembers(name string) string {
	return GroupID(name) + "#" + RelationMember
}

// OwnerRole is the role whose assignees own the Account named name held by
// originCluster: "role:<account type>/<origin cluster>/<name>/owner"
// (Platform Mesh's name), its parts escaped.
func OwnerRole(originCluster, name string) string {
	return joinID(RoleType, MaxObjectLength, AccountType, originCluster, name, "owner")
}

// ErrShortened is returned by ParseID for an id that ends in a hash: its
// parts cannot be read back.
var ErrShortened = errors.New("the id is shortened to a hash")

// ParseID splits an object or user id into its type and unescaped
// segments (cluster, [namespace,] name for an object).
func ParseID(id string) (typ string, segments []string, err error) {
	typ, rest, ok := strings.Cut(id, ":")
	if !ok || typ == "" {
		return "", nil, fmt.Errorf("id %q has no type", id)
	}
	if strings.Contains(rest, HashMarker) {
		return typ, nil, ErrShortened
	}
	for _, part := range strings.Split(rest, "/") {
		s, err := UnescapeSegment(part)
		if err != nil {
			return "", nil, fmt.Errorf("id %q: %w", id, err)
		}
		segments = append(segments, s)
	}
	return typ, segments, nil
}
