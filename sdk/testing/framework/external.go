package framework

import (
	"encoding/csv"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/meshplane/meshplane/sdk/platformenv"
)

// Environment variables selecting external mode (see the package documentation).
const (
	ExternalKubeconfigEnv = "MESHPLANE_EXTERNAL_KUBECONFIG"
	PlatformEnvEnv        = "MESHPLANE_PLATFORM_ENV"
	// ExternalTokenUsersEnv names a --token-auth-file of the external core
	// (token,user,uid,"groups" lines): its users are known to the tests, so
	// those acting as alice or bob run instead of skipping.
	ExternalTokenUsersEnv = "MESHPLANE_EXTERNAL_TOKEN_USERS"
)

// ExternalMode reports whether the tests run against an already running core
// (MESHPLANE_EXTERNAL_KUBECONFIG or MESHPLANE_PLATFORM_ENV is set).
func ExternalMode() bool {
	return os.Getenv(ExternalKubeconfigEnv) != "" || os.Getenv(PlatformEnvEnv) != ""
}

// SkipIfExternal skips the test in external mode; why says what the test
// needs that an external server cannot give (e.g. "it restarts the server").
func SkipIfExternal(t testing.TB, why string) {
	t.Helper()
	if ExternalMode() {
		t.Skipf("skipped in external mode (%s or %s is set): %s", ExternalKubeconfigEnv, PlatformEnvEnv, why)
	}
}

// Platform is what a platform.env file says about a running platform.
type Platform struct {
	// Kubeconfig is the admin kubeconfig of the core (KUBECONFIG=).
	Kubeconfig string
	// CoreURL is the core's base URL (CORE_URL=), if given.
	CoreURL string
	// Vars are all the file's variables, e.g. other components' *_URL.
	Vars map[string]string
}

// URL returns the variable <NAME>_URL of the platform (name upper-cased,
// '-' as '_'), e.g. URL("gateway") for GATEWAY_URL; "" when not set.
func (p *Platform) URL(name string) string {
	return p.Vars[strings.ToUpper(strings.ReplaceAll(name, "-", "_"))+"_URL"]
}

// ReadPlatformEnv parses a platform.env file: shell-style KEY=value lines
// (an optional "export ", '#' comments, values optionally quoted). KUBECONFIG
// is required; a relative path is taken relative to the file.
func ReadPlatformEnv(path string) (*Platform, error) {
	vars, err := platformenv.Read(path)
	if err != nil {
		return nil, fmt.Errorf("reading platform env: %w", err)
	}
	p := &Platform{Vars: vars}
	p.Kubeconfig, p.CoreURL = p.Vars["KUBECONFIG"], p.Vars["CORE_URL"]
	if p.Kubeconfig == "" {
		return nil, fmt.Errorf("%s has no KUBECONFIG=", path)
	}
	if !filepath.IsAbs(p.Kubeconfig) {
		p.Kubeconfig = filepath.Join(filepath.Dir(path), p.Kubeconfig)
	}
	return p, nil
}

// ExternalFromEnv returns the external server named by the environment, or
// nil when external mode is off.
func ExternalFromEnv() (s *Server, err error) {
	switch {
	case os.Getenv(PlatformEnvEnv) != "":
		p, err := ReadPlatformEnv(os.Getenv(PlatformEnvEnv))
		if err != nil {
			return nil, err
		}
		s, err = Connect(p.Kubeconfig, p.CoreURL)
		if err != nil {
			return nil, err
		}
	case os.Getenv(ExternalKubeconfigEnv) != "":
		if s, err = Connect(os.Getenv(ExternalKubeconfigEnv), ""); err != nil {
			return nil, err
		}
	default:
		return nil, nil
	}
	if path := os.Getenv(ExternalTokenUsersEnv); path != "" {
		users, err := ReadTokenUsers(path)
		if err != nil {
			s.Cleanup(false)
			return nil, err
		}
		for _, u := range users {
			s.users[u.Name] = u
		}
	}
	return s, nil
}

// ReadTokenUsers reads a --token-auth-file: token,user,uid[,"group1,group2"].
func ReadTokenUsers(path string) ([]TokenUser, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("token users: %w", err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = -1
	recs, err := r.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("token users %s: %w", path, err)
	}
	var users []TokenUser
	for i, rec := range recs {
		if len(rec) < 3 {
			return nil, fmt.Errorf("token users %s: line %d: want token,user,uid[,groups]", path, i+1)
		}
		u := TokenUser{Token: rec[0], Name: rec[1], UID: rec[2]}
		if len(rec) > 3 && rec[3] != "" {
			u.Groups = strings.Split(rec[3], ",")
		}
		users = append(users, u)
	}
	return users, nil
}

// Connect returns an external Server for a running core whose admin
// kubeconfig (with the contexts of AdminContexts) is at kubeconfig. baseURL
// is the core's URL; when empty it is the server of the shard-base context
// without any /clusters/<name> suffix. Call Cleanup when done.
func Connect(kubeconfig, baseURL string) (*Server, error) {
	abs, err := filepath.Abs(kubeconfig)
	if err != nil {
		return nil, err
	}
	s := &Server{Kubeconfig: abs, External: true, users: map[string]TokenUser{}}
	cfg, err := s.loadKubeconfig()
	if err != nil {
		return nil, fmt.Errorf("external core: loading %s: %w", abs, err)
	}
	if baseURL == "" {
		ctx := cfg.Contexts["shard-base"]
		cl, ok := cfg.Clusters[ctx.Cluster]
		if !ok {
			return nil, fmt.Errorf("external core: context shard-base of %s refers to missing cluster %q", abs, ctx.Cluster)
		}
		baseURL = cl.Server
	}
	u, err := url.Parse(baseURL)
	if err != nil {
		return nil, fmt.Errorf("external core: URL %q: %w", baseURL, err)
	}
	u.Path, _, _ = strings.Cut(u.Path, "/clusters/")
	s.BaseURL = strings.TrimSuffix(u.String(), "/")
	if s.RootDir, err = os.MkdirTemp("", "meshplane-external-"); err != nil {
		return nil, err
	}
	// The kubeconfig is read again by clients; make sure it is usable now.
	if _, err := clientcmd.NewNonInteractiveClientConfig(*cfg, "shard-base", &clientcmd.ConfigOverrides{}, nil).ClientConfig(); err != nil {
		os.RemoveAll(s.RootDir)
		return nil, fmt.Errorf("external core: context shard-base of %s: %w", abs, err)
	}
	return s, nil
}
