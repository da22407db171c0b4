package launcher

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// ParseFlags reads the launcher's command line.
func ParseFlags(args []string) (Config, error) {
	c := Config{}
	fs := flag.NewFlagSet("meshplane-platform", flag.ContinueOnError)
	fs.StringVar(&c.RootDir, "root-directory", ".meshplane", "Directory for all of the platform's state.")
	fs.IntVar(&c.Ports.Base, "port-base", DefaultPortBase, fmt.Sprintf("First of the %d ports the platform may open (the core's secure port; %d with --shards 3 or 4).", PortRange, ExtendedPortRange))
	fs.StringVar(&c.BinDir, "bin-dir", "", "Directory holding the platform's binaries (default: the launcher's own directory).")
	fs.BoolVar(&c.DemoUsers, "demo-users", true, "Create the demo users alice and bob (local runs only).")
	fs.StringVar(&c.ExternalOpenFGA, "openfga-url", "", "HTTP API of an external OpenFGA (production: one backed by PostgreSQL); default: start OpenFGA with a SQLite store in the root directory.")
	fs.StringVar(&c.ExternalOpenFGAKeyFile, "openfga-preshared-key-file", "", "File (mode 0600) with the preshared API key of the --openfga-url OpenFGA, handed to the security-operator and the rebac-authz-webhook; the platform's own OpenFGA gets a key made once in <root>/openfga/preshared.key.")
	fs.StringVar(&c.OrganizationStores, "organization-stores", "", "The security-operator's --organization-stores: per-organization (a store each, its default) or shared (one OpenFGA store for all organizations; docs/authorization.md, Scale).")
	fs.DurationVar(&c.OperatorTokenTTL, "operator-token-ttl", DefaultOperatorTokenTTL, "Lifetime of the ServiceAccount tokens the launcher keeps fresh for the operators and the example providers (at least 10m).")
	fs.DurationVar(&c.OperatorTokenRefresh, "operator-token-refresh", 0, "Age at which those tokens are replaced (default: 80% of --operator-token-ttl).")
	operatorArgs := fs.String("account-operator-args", "", "Extra arguments for the account-operator, separated by spaces (e.g. --workers 16 --profiling).")
	securityArgs := fs.String("security-operator-args", "", "Extra arguments for the security-operator, separated by spaces (e.g. --profiling).")
	openFGAArgs := fs.String("openfga-args", "", "Extra arguments for `openfga run` of the platform's own OpenFGA, separated by spaces (e.g. --profiler-enabled --profiler-addr 127.0.0.1:<port>).")
	fs.StringVar(&c.AuthenticationConfig, "authentication-config", os.Getenv("AUTHENTICATION_CONFIG"), "AuthenticationConfiguration file (apiserver.config.k8s.io) handed to the core's --authentication-config: OIDC/JWT issuers whose tokens authenticate users, reloaded when the file changes (default $AUTHENTICATION_CONFIG; none by default).")
	coreArgs := fs.String("core-args", "", "Extra arguments for `meshplane start`, separated by spaces.")
	mountHosts := fs.String("mount-allowed-hosts", os.Getenv("MOUNT_ALLOWED_HOSTS"), "Every shard's --mount-allowed-hosts, comma separated: where mounted workspaces may point, e.g. 127.0.0.1:9443 for kubecluster-mounts next to the platform (default $MOUNT_ALLOWED_HOSTS; none: mounts reach nothing).")
	examples := fs.String("examples", os.Getenv("EXAMPLES"), "Example providers to run too, comma-separated: "+strings.Join(Examples, ", ")+" (default $EXAMPLES; none by default).")
	fs.IntVar(&c.Shards, "shards", 1, fmt.Sprintf("Core shards to run, 1 to %d: a second shard (b) comes with the front proxy, on the range's offsets 16..19, and platform.env's KUBECONFIG is then the proxy's; shards c and d (3, 4) widen the range to PORT_BASE+%d.", MaxShards, ExtendedPortRange-1))
	fs.StringVar(&c.ExamplesDir, "examples-dir", "", "Directory of the examples' manifests (default: ../examples from the bin directory).")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	c.CoreArgs = strings.Fields(*coreArgs)
	for _, h := range strings.Split(*mountHosts, ",") {
		if h = strings.TrimSpace(h); h != "" {
			c.MountAllowedHosts = append(c.MountAllowedHosts, h)
		}
	}
	if err := c.checkAuthenticationConfig(); err != nil {
		return c, err
	}
	for _, e := range strings.Split(*examples, ",") {
		if e = strings.TrimSpace(e); e != "" && !slices.Contains(c.Examples, e) {
			c.Examples = append(c.Examples, e)
		}
	}
	if err := ValidateExamples(c.Examples); err != nil {
		return c, err
	}
	c.AccountOperatorArgs = strings.Fields(*operatorArgs)
	c.SecurityOperatorArgs = strings.Fields(*securityArgs)
	switch c.OrganizationStores {
	case "", "per-organization", "shared":
	default:
		return c, fmt.Errorf("--organization-stores %q must be per-organization or shared", c.OrganizationStores)
	}
	c.OpenFGAArgs = strings.Fields(*openFGAArgs)
	if c.BinDir == "" {
		self, err := os.Executable()
		if err != nil {
			return c, err
		}
		c.BinDir = filepath.Dir(self)
	}
	if c.ExamplesDir == "" {
		c.ExamplesDir = filepath.Join(c.BinDir, "..", "examples")
	}
	if c.ExternalOpenFGAKeyFile != "" {
		if c.ExternalOpenFGA == "" {
			return c, fmt.Errorf("--openfga-preshared-key-file is the key of --openfga-url's OpenFGA; the platform's own OpenFGA makes its key")
		}
		abs, err := filepath.Abs(c.ExternalOpenFGAKeyFile)
		if err != nil {
			return c, err
		}
		st, err := os.Stat(abs)
		if err != nil {
			return c, fmt.Errorf("--openfga-preshared-key-file: %w", err)
		}
		if st.Mode().Perm()&0o077 != 0 {
			return c, fmt.Errorf("--openfga-preshared-key-file %s: mode %v, want no access for group and others (0600)", abs, st.Mode().Perm())
		}
		c.ExternalOpenFGAKeyFile = abs
	}
	if c.OperatorTokenTTL < 10*time.Minute {
		return c, fmt.Errorf("--operator-token-ttl %s: TokenRequest allows no less than 10m", c.OperatorTokenTTL)
	}
	if c.OperatorTokenRefresh < 0 || c.OperatorTokenRefresh >= c.OperatorTokenTTL {
		return c, fmt.Errorf("--operator-token-refresh %s must be below --operator-token-ttl %s", c.OperatorTokenRefresh, c.OperatorTokenTTL)
	}
	if err := checkShards(c.Shards); err != nil {
		return c, err
	}
	c.Ports.Shards = c.Shards
	return c, c.Ports.Validate()
}

// checkAuthenticationConfig makes --authentication-config absolute (the
// core watches the file for changes) and refuses a path that is not a
// readable file at once, instead of a core that fails to start.
func (c *Config) checkAuthenticationConfig() error {
	if c.AuthenticationConfig == "" {
		return nil
	}
	abs, err := filepath.Abs(c.AuthenticationConfig)
	if err != nil {
		return fmt.Errorf("--authentication-config %s: %w", c.AuthenticationConfig, err)
	}
	st, err := os.Stat(abs)
	if err != nil {
		return fmt.Errorf("--authentication-config: %w", err)
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("--authentication-config %s is not a file", abs)
	}
	c.AuthenticationConfig = abs
	return nil
}
