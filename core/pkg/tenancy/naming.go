package tenancy

import (
	"crypto/sha256"
	"math/big"
	"strings"

	"github.com/meshplane/meshplane/core/pkg/clusters"
)

// Logical cluster names are derived, never chosen: a hash of what makes
// the cluster unique, written in base36. Both rules below are stored in
// every existing server's data (as cluster names in etcd keys and
// workspace paths), so they must never change. They share the code path
// and differ only in input and length.

// WorkspaceClusterName derives a child workspace's logical cluster name
// from its parent cluster and the Workspace's UID: the first 16 base36
// digits of sha224(parent/uid), zero-padded, stable across retries.
func WorkspaceClusterName(parent, uid string) string {
	s := hash36(parent+"/"+uid, sha256.Size224)
	if len(s) < 16 {
		s = strings.Repeat("0", 16-len(s)) + s
	}
	return s[:16]
}

// HomeClusterName is the logical cluster of a user's home workspace:
// base36 of the first 8 bytes of sha224(username), not padded.
func HomeClusterName(username string) string {
	return hash36(username, 8)
}

// HomePath is the workspace path of a user's home: user:<name>, or
// user:<cluster> when the name is no valid path segment.
func HomePath(username string) string {
	if clusters.IsValidName(username) {
		return "user:" + username
	}
	return "user:" + HomeClusterName(username)
}

// hash36 is base36 of the first n bytes of sha224(s).
func hash36(s string, n int) string {
	sum := sha256.Sum224([]byte(s))
	return new(big.Int).SetBytes(sum[:n]).Text(36)
}
