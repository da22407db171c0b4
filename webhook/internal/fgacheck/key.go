package fgacheck

import (
	"fmt"
	"os"
	"strings"
)

// ReadKeyFile reads a preshared API key from path: the file's first
// non-empty line. The file must not be readable by group or others.
func ReadKeyFile(path string) (string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("openfga key file: %w", err)
	}
	if st.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("openfga key file %s: mode %v, want no access for group and others (0600)", path, st.Mode().Perm())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("openfga key file: %w", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k := strings.TrimSpace(line); k != "" {
			return k, nil
		}
	}
	return "", fmt.Errorf("openfga key file %s holds no key", path)
}
