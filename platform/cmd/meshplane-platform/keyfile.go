package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/meshplane/meshplane/providers/credentials"
)

// keyFile copies a secret file (a preshared API key mounted from a
// Kubernetes Secret, whose files are group-readable) to a file of mode
// 0600 owned by the caller, which the platform's OpenFGA clients accept:
// the Helm charts run it as an init container. Exit 0 on success, 1 on
// failure, 2 on bad arguments.
func keyFile(args []string) int {
	fs := flag.NewFlagSet("meshplane-platform key-file", flag.ContinueOnError)
	from := fs.String("from", "", "File to copy (required).")
	to := fs.String("to", "", "File to write, mode 0600 (required).")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if *from == "" || *to == "" || fs.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "meshplane-platform key-file: --from and --to are required, and nothing else")
		return 2
	}
	b, err := os.ReadFile(*from)
	if err != nil {
		fmt.Fprintln(os.Stderr, "meshplane-platform key-file:", err)
		return 1
	}
	if err := os.MkdirAll(filepath.Dir(*to), 0o700); err != nil {
		fmt.Fprintln(os.Stderr, "meshplane-platform key-file:", err)
		return 1
	}
	if err := credentials.WriteFileAtomic(*to, b); err != nil {
		fmt.Fprintln(os.Stderr, "meshplane-platform key-file:", err)
		return 1
	}
	return 0
}
