package credentials

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/rest"
)

// TokenFile keeps a ServiceAccount token in a file fresh, as the kubelet
// does for a pod's projected token: it mints a token (TokenRequest) valid
// for TTL, writes it atomically, and mints the next one when RefreshAfter
// has passed (default 80% of TTL, the kubelet's rule). A client whose
// kubeconfig names the file as tokenFile (client-go re-reads it every
// minute) so never holds an expired token, and needs no right to mint
// tokens itself.
type TokenFile struct {
	// Config may create serviceaccounts/token for the ServiceAccount.
	Config          *rest.Config
	Namespace, Name string
	TTL             time.Duration
	// Path is the token file.
	Path string
	// RefreshAfter is a token's age at which the next is minted; 0 means
	// 80% of TTL. It is capped at TTL minus one minute.
	RefreshAfter time.Duration
	// Logf reports failed refreshes (retried); nil discards them.
	Logf func(format string, args ...any)
}

// Validate checks the settings.
func (t *TokenFile) Validate() error {
	if t.TTL < 10*time.Minute {
		return fmt.Errorf("token lifetime %s is shorter than the 10 minutes TokenRequest allows", t.TTL)
	}
	if t.RefreshAfter < 0 || t.RefreshAfter >= t.TTL {
		return fmt.Errorf("token refresh after %s must lie between 0 and the lifetime %s", t.RefreshAfter, t.TTL)
	}
	return nil
}

// refreshAfter is when the next token is due.
func (t *TokenFile) refreshAfter() time.Duration {
	after := t.RefreshAfter
	if after == 0 {
		after = t.TTL * 8 / 10
	}
	return min(after, t.TTL-time.Minute)
}

// Mint writes a fresh token into the file.
func (t *TokenFile) Mint(ctx context.Context) error {
	token, err := Token(ctx, t.Config, t.Namespace, t.Name, t.TTL)
	if err != nil {
		return err
	}
	return WriteFileAtomic(t.Path, []byte(token))
}

// Run refreshes the token until ctx ends; call Mint first. A failed mint
// is retried every 10 seconds while the current token is still valid.
func (t *TokenFile) Run(ctx context.Context) {
	wait := t.refreshAfter()
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		if err := t.Mint(ctx); err != nil {
			if ctx.Err() != nil {
				return
			}
			if t.Logf != nil {
				t.Logf("refreshing the token of %s/%s in %s (retrying in 10s): %v", t.Namespace, t.Name, t.Path, err)
			}
			wait = 10 * time.Second
			continue
		}
		wait = t.refreshAfter()
	}
}

// WriteFileAtomic replaces path with data (mode 0600) so that a reader
// sees the old content or the new, never a partial file.
func WriteFileAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
