package bench

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"regexp"
	"strings"
	"time"
)

// RandomSuffix returns n random characters from [a-z0-9], usable in
// Kubernetes object names and logical cluster names.
func RandomSuffix(n int) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	buf := make([]byte, n)
	if _, err := rand.Read(buf); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	for i := range buf {
		buf[i] = alphabet[int(buf[i])%len(alphabet)]
	}
	return string(buf)
}

// BaseServerURL strips a trailing /clusters/<path>[/...] from a kubeconfig
// server URL, so that contexts like `root` (https://host/clusters/root) and
// `base` (https://host) both yield https://host. Any other path prefix (for
// example a reverse proxy prefix) is preserved.
func BaseServerURL(server string) (string, error) {
	u, err := url.Parse(server)
	if err != nil {
		return "", fmt.Errorf("parse server URL %q: %w", server, err)
	}
	if u.Scheme == "" || u.Host == "" {
		return "", fmt.Errorf("server URL %q needs a scheme and a host", server)
	}
	p := u.Path
	if i := strings.Index(p+"/", "/clusters/"); i >= 0 {
		p = p[:i]
	}
	u.Path = strings.TrimRight(p, "/")
	u.RawPath = ""
	u.RawQuery = ""
	u.Fragment = ""
	return u.String(), nil
}

// ClusterURL returns the URL of logical cluster (or workspace path) name
// below a base server URL.
func ClusterURL(base, name string) string {
	return strings.TrimRight(base, "/") + "/clusters/" + name
}

var clusterPathRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(:[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$`)

// ValidateClusterName checks a logical cluster name or a colon-separated
// workspace path such as root:org:team.
func ValidateClusterName(name string) error {
	if !clusterPathRE.MatchString(name) {
		return fmt.Errorf("invalid logical cluster name or path %q (lowercase alphanumerics and '-', segments separated by ':')", name)
	}
	return nil
}

// FreePort asks the kernel for a currently free TCP port on 127.0.0.1.
// There is an unavoidable race between closing the probe listener and the
// eventual user binding the port.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// WaitForFile polls until path exists and check(path) succeeds, or ctx
// ends. check may be nil.
func WaitForFile(ctx context.Context, path string, interval time.Duration, check func(string) error) error {
	var lastErr error
	for {
		_, err := os.Stat(path)
		if err == nil && check != nil {
			err = check(path)
		}
		if err == nil {
			return nil
		}
		lastErr = err
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %v: %w", path, lastErr, ctx.Err())
		case <-time.After(interval):
		}
	}
}

// Tail returns at most the last n bytes of a file, for error messages.
func Tail(path string, n int64) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return ""
	}
	off := max(st.Size()-n, 0)
	buf := make([]byte, st.Size()-off)
	if _, err := f.ReadAt(buf, off); err != nil && !errors.Is(err, io.EOF) {
		return ""
	}
	return string(buf)
}
