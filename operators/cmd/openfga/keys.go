package main

import (
	"fmt"
	"os"
	"strings"
)

// presharedKeysFile names a file of preshared API keys, one per line: a
// key in a file (mode 0600, or a mounted Secret) stays out of the process
// list, where --authn-preshared-keys would show it.
const presharedKeysFile = "OPENFGA_AUTHN_PRESHARED_KEYS_FILE"

// presharedKeysFromFile reads the keys of $OPENFGA_AUTHN_PRESHARED_KEYS_FILE,
// when set, into OPENFGA_AUTHN_PRESHARED_KEYS (comma-separated, as OpenFGA
// reads it) and sets OPENFGA_AUTHN_METHOD=preshared unless a method is
// set. The file must not be readable by others.
func presharedKeysFromFile() error {
	path := os.Getenv(presharedKeysFile)
	if path == "" {
		return nil
	}
	st, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("%s: %w", presharedKeysFile, err)
	}
	if st.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("%s %s: mode %v, want no access for group and others (0600)", presharedKeysFile, path, st.Mode().Perm())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("%s: %w", presharedKeysFile, err)
	}
	var keys []string
	for _, line := range strings.Split(string(b), "\n") {
		if k := strings.TrimSpace(line); k != "" {
			if strings.Contains(k, ",") {
				return fmt.Errorf("%s %s: a key must not contain a comma", presharedKeysFile, path)
			}
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return fmt.Errorf("%s %s holds no key", presharedKeysFile, path)
	}
	if os.Getenv("OPENFGA_AUTHN_METHOD") == "" {
		if err := os.Setenv("OPENFGA_AUTHN_METHOD", "preshared"); err != nil {
			return err
		}
	}
	return os.Setenv("OPENFGA_AUTHN_PRESHARED_KEYS", strings.Join(keys, ","))
}
