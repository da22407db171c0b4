// Package keyfile reads a secret (a preshared API key) from a file that
// only its owner may read, so the secret is on no command line or
// environment.
package keyfile

import (
	"fmt"
	"os"
	"strings"
)

// Read returns the first non-empty line of path, trimmed. A file that
// group or others may read is refused.
func Read(path string) (string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("key file: %w", err)
	}
	if st.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("key file %s: mode %v, want no access for group and others (0600)", path, st.Mode().Perm())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("key file: %w", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k := strings.TrimSpace(line); k != "" {
			return k, nil
		}
	}
	return "", fmt.Errorf("key file %s holds no key", path)
}
