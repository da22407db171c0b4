// Command apigen turns CustomResourceDefinition YAML files into kcp
// APIResourceSchema and APIExport YAML files.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/pflag"

	"github.com/meshplane/meshplane/core/pkg/apigen"
)

const usage = `Usage:
  apigen --input-dir DIR [--output-dir DIR]
  apigen [--output-dir DIR] FILE... ("-" reads standard input)

Converts the CustomResourceDefinitions (apiextensions.k8s.io/v1) in the input
YAML files into kcp APIResourceSchemas (apis.kcp.io/v1alpha1) and one APIExport
(apis.kcp.io/v1alpha2) per API group. Multi-document files are allowed;
documents that are not CRDs are skipped with a note on stderr.

With --output-dir, writes apiresourceschema-<plural>.<group>.yaml and
apiexport-<group>.yaml there. A schema whose spec is unchanged keeps the name
it already has in the output directory; an existing APIExport file only has its
spec.resources replaced. Without --output-dir (or with "-"), all objects are
written to stdout as one YAML stream.

Flags:
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("apigen", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, usage)
		fs.PrintDefaults()
	}
	opts := apigen.Options{Stdin: stdin, Stdout: stdout, Stderr: stderr}
	fs.StringVar(&opts.InputDir, "input-dir", "", "directory whose *.yaml and *.yml files contain the CRDs")
	fs.StringVar(&opts.OutputDir, "output-dir", "", `directory to write the generated files to; empty or "-" for stdout`)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return 0
		}
		fmt.Fprintf(stderr, "apigen: %v\nRun 'apigen --help' for usage.\n", err)
		return 2
	}
	opts.Files = fs.Args()
	if opts.InputDir == "" && len(opts.Files) == 0 {
		fmt.Fprintln(stderr, "apigen: no input: set --input-dir or pass input files")
		fs.Usage()
		return 2
	}
	if opts.InputDir != "" && len(opts.Files) > 0 {
		fmt.Fprintln(stderr, "apigen: use either --input-dir or input file arguments, not both")
		return 2
	}
	if err := apigen.Run(opts); err != nil {
		fmt.Fprintf(stderr, "apigen: %v\n", err)
		return 1
	}
	return 0
}
