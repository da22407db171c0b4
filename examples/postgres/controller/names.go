package controller

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// maxIdentifier is PostgreSQL's identifier length (NAMEDATALEN - 1).
const maxIdentifier = 63

// Names are the database and role on the server for a Database: derived
// from the consumer's logical cluster, namespace and name (and the owner
// for the role), so equal names in two workspaces never meet.
func Names(cluster, namespace, name, owner string) (database, role string) {
	database = identifier(cluster, namespace, name)
	return database, identifier(cluster, namespace, name, owner)
}

// identifier joins parts with "_", keeping [a-z0-9_]. When a character
// had to be replaced ("my-app" and "my.app" would meet) the result ends in a
// hash of the parts; one longer than maxIdentifier is cut before the hash.
func identifier(parts ...string) string {
	whole := strings.Join(parts, "/")
	var b strings.Builder
	replaced := false
	for i, p := range parts {
		if i > 0 {
			b.WriteByte('_')
		}
		for _, r := range p {
			if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' {
				b.WriteRune(r)
			} else {
				b.WriteByte('_')
				replaced = true
			}
		}
	}
	id := b.String()
	if !replaced && len(id) <= maxIdentifier {
		return id
	}
	sum := sha256.Sum256([]byte(whole))
	h := hex.EncodeToString(sum[:])[:12]
	if len(id) > maxIdentifier-len(h)-1 {
		id = id[:maxIdentifier-len(h)-1]
	}
	return id + "_" + h
}
