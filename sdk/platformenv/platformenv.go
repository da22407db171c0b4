// Package platformenv reads and writes platform.env, the file a running
// Meshplane platform leaves in its root directory once every component is
// ready: shell KEY=value lines (KUBECONFIG=, CORE_URL=, one <NAME>_URL= per
// component). The launcher writes it; scripts and the test kit read it.
package platformenv

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// FileName is the file's name in the platform's root directory.
const FileName = "platform.env"

// Entry is one KEY=value line.
type Entry struct{ Key, Value string }

// Write writes the entries atomically (a reader sees no file or the whole
// file). Values must be plain shell words, so the file can be sourced.
func Write(path string, entries []Entry) error {
	var b strings.Builder
	for _, e := range entries {
		if e.Key == "" || strings.ContainsAny(e.Key, "= \n") {
			return fmt.Errorf("platform.env: bad key %q", e.Key)
		}
		if strings.ContainsAny(e.Value, "\n'\"$`\\ ") {
			return fmt.Errorf("platform.env: value of %s is not a plain shell word: %q", e.Key, e.Value)
		}
		fmt.Fprintf(&b, "%s=%s\n", e.Key, e.Value)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".platform.env-*")
	if err != nil {
		return err
	}
	_, werr := tmp.WriteString(b.String())
	cerr := tmp.Close()
	if err := firstErr(werr, cerr, os.Chmod(tmp.Name(), 0o644)); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// Read parses the file: KEY=value lines, an optional "export " prefix, '#'
// comments, values optionally quoted.
func Read(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	vars := map[string]string{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, val, ok := strings.Cut(strings.TrimPrefix(line, "export "), "=")
		if !ok || strings.TrimSpace(key) == "" {
			return nil, fmt.Errorf("%s:%d: want KEY=value, got %q", path, n, line)
		}
		val = strings.TrimSpace(val)
		if len(val) >= 2 && (val[0] == '"' || val[0] == '\'') && val[len(val)-1] == val[0] {
			val = val[1 : len(val)-1]
		}
		vars[strings.TrimSpace(key)] = val
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return vars, nil
}
