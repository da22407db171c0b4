package launcher

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
)

// openFGAKeyFileName is the preshared API key of the platform's OpenFGA,
// in <root>/openfga.
const openFGAKeyFileName = "preshared.key"

// ensureKeyFile writes a random 256-bit key (hex) to path, mode 0600,
// unless the file exists; an existing one is kept (the clients started
// with it keep working across restarts) and made 0600 if it was not.
func ensureKeyFile(path string) error {
	if st, err := os.Stat(path); err == nil {
		if st.Mode().Perm() != 0o600 {
			return os.Chmod(path, 0o600)
		}
		return nil
	}
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(hex.EncodeToString(b)+"\n"), 0o600); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return os.Rename(tmp, path)
}
