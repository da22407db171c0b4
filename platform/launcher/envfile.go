package launcher

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// EnvFileName is the file, in the root directory, that says the platform
// is ready and where its parts listen.
const EnvFileName = "platform.env"

// EnvEntry is one KEY=value line of platform.env.
type EnvEntry struct{ Key, Value string }

// writeEnvFile writes the entries as shell KEY=value lines, atomically: a
// reader sees either no file or the whole file.
func writeEnvFile(path string, entries []EnvEntry) error {
	var b strings.Builder
	for _, e := range entries {
		if strings.ContainsAny(e.Value, "\n'\"$` ") {
			return fmt.Errorf("platform.env: value of %s is not a plain shell word: %q", e.Key, e.Value)
		}
		fmt.Fprintf(&b, "%s=%s\n", e.Key, e.Value)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".platform.env-*")
	if err != nil {
		return err
	}
	if _, err := tmp.WriteString(b.String()); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// ReadEnvFile parses a platform.env file.
func ReadEnvFile(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	env := map[string]string{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("%s:%d: not a KEY=value line: %q", path, n, line)
		}
		env[k] = v
	}
	return env, sc.Err()
}
