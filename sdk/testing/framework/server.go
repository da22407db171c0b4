package framework

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/csv"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/meshplane/meshplane/sdk/process"
)

// TokenUser is a user known to the server through --token-auth-file.
type TokenUser struct {
	Name   string
	UID    string
	Groups []string
	// Token is generated when empty.
	Token string
}

// DefaultTokenUsers are added to every server started by the kit. None of
// them is in system:masters, so they are authorized by RBAC only.
var DefaultTokenUsers = []TokenUser{
	{Name: "alice", UID: "uid-alice", Groups: []string{"e2e:users"}},
	{Name: "bob", UID: "uid-bob", Groups: []string{"e2e:users"}},
	{Name: "carol", UID: "uid-carol"},
}

// Options configure a server started by the kit.
type Options struct {
	// TokenUsers are written to the --token-auth-file (DefaultTokenUsers when nil).
	TokenUsers []TokenUser
	// ExtraArgs are appended to `meshplane start`.
	ExtraArgs []string
	// StartTimeout bounds the wait for /readyz.
	StartTimeout time.Duration
	// Binary is the meshplane binary (MeshplaneBinary() when empty).
	Binary string
	// ShareWith is a server whose CA, admin tokens and token users this
	// one gets (another shard of the same install).
	ShareWith *Server
}

// Option changes Options.
type Option func(*Options)

// WithTokenUsers replaces the default token users.
func WithTokenUsers(users ...TokenUser) Option {
	return func(o *Options) { o.TokenUsers = users }
}

// WithExtraArgs appends arguments to `meshplane start`.
func WithExtraArgs(args ...string) Option {
	return func(o *Options) { o.ExtraArgs = append(o.ExtraArgs, args...) }
}

// WithStartTimeout changes how long to wait for /readyz.
func WithStartTimeout(d time.Duration) Option {
	return func(o *Options) { o.StartTimeout = d }
}

// WithCredentialsOf makes the server another shard of root's install: it
// starts with root's CA (ca.crt, ca.key: its serving certificate is
// signed by it), admin tokens, service-account signing key and token
// users, so one kubeconfig and one token work on every shard.
func WithCredentialsOf(root *Server) Option {
	return func(o *Options) { o.ShareWith = root }
}

// WithBinary runs another meshplane binary than MeshplaneBinary().
func WithBinary(path string) Option {
	return func(o *Options) { o.Binary = path }
}

// Server is a meshplane core: a process started by the kit, or an external
// one reached through its admin kubeconfig (External is then true, and
// there is no process, log or token file).
type Server struct {
	// RootDir is the --root-directory; it holds the log and admin.kubeconfig.
	// For an external server it is a temporary directory for kubectl caches.
	RootDir string
	// Port is the --secure-port.
	Port int
	// EtcdClientPort and EtcdPeerPort are the embedded etcd ports.
	EtcdClientPort int
	EtcdPeerPort   int
	// Kubeconfig is the admin kubeconfig: RootDir/admin.kubeconfig, written
	// by the server, or the external one.
	Kubeconfig string
	// BaseURL is https://127.0.0.1:<Port>, or the external server's URL.
	BaseURL string
	// PID of the running process (of the last start).
	PID int
	// LogPath is the file receiving the server's stdout and stderr.
	LogPath string
	// TokenFile is the --token-auth-file.
	TokenFile string
	// External is true for a server the kit did not start (see the package
	// documentation): it cannot be stopped or restarted, and only the admin
	// kubeconfig's users are known.
	External bool

	binary       string
	extraArgs    []string
	startTimeout time.Duration
	users        map[string]TokenUser
	ownsRootDir  bool

	mu   sync.Mutex
	proc *process.Process
	kcfg *clientcmdapi.Config
}

// StartServer starts a dedicated server for one test (or benchmark). It is
// stopped when the test ends; its log is dumped if the test failed, and its
// root directory is removed unless the test failed or MESHPLANE_E2E_KEEP is
// set. In external mode the test is skipped: it needs a process of its own.
func StartServer(t testing.TB, opts ...Option) *Server {
	t.Helper()
	SkipIfExternal(t, "it starts a meshplane process of its own")
	s, err := Start(opts...)
	if err != nil {
		t.Fatalf("starting meshplane: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("meshplane log (%s), last %d lines:\n%s", s.LogPath, dumpLines, s.LogTail(0, dumpLines))
		}
		if err := s.Stop(); err != nil {
			t.Errorf("stopping meshplane: %v", err)
		}
		if t.Failed() || keepDirs() {
			t.Logf("meshplane root directory kept: %s", s.RootDir)
		} else {
			s.removeRootDir()
		}
	})
	return s
}

// Start starts a meshplane server on 127.0.0.1 (free ports, a temporary root
// directory) and waits until it is ready. It does not need a test: the
// caller must Stop it, or Cleanup to also remove its root directory.
func Start(opts ...Option) (*Server, error) {
	o := Options{TokenUsers: DefaultTokenUsers, StartTimeout: defaultStartTimeout()}
	for _, opt := range opts {
		opt(&o)
	}
	if extra := strings.Fields(os.Getenv("MESHPLANE_E2E_ARGS")); len(extra) > 0 {
		o.ExtraArgs = append(o.ExtraArgs, extra...)
	}
	bin := o.Binary
	if bin == "" {
		var err error
		if bin, err = MeshplaneBinary(); err != nil {
			return nil, err
		}
	}
	dir, err := os.MkdirTemp("", "meshplane-e2e-")
	if err != nil {
		return nil, err
	}
	s := &Server{
		RootDir:      dir,
		Kubeconfig:   filepath.Join(dir, "admin.kubeconfig"),
		LogPath:      filepath.Join(dir, "meshplane.log"),
		TokenFile:    filepath.Join(dir, "tokens.csv"),
		binary:       bin,
		extraArgs:    o.ExtraArgs,
		startTimeout: o.StartTimeout,
		users:        map[string]TokenUser{},
		ownsRootDir:  true,
	}
	if o.ShareWith != nil {
		if err := s.shareCredentials(o.ShareWith); err != nil {
			return nil, err
		}
		o.TokenUsers = nil
		for _, u := range o.ShareWith.users {
			o.TokenUsers = append(o.TokenUsers, u)
		}
	}
	if err := s.writeTokenFile(o.TokenUsers); err != nil {
		return nil, err
	}

	// Free ports are picked by listening on 127.0.0.1:0 and closing the
	// listener, so another process may grab one in between: retry with new
	// ports when the server reports a bind failure.
	var lastErr error
	for attempt := 1; attempt <= 3; attempt++ {
		ports, err := process.FreePorts(3)
		if err != nil {
			return nil, err
		}
		s.Port, s.EtcdClientPort, s.EtcdPeerPort = ports[0], ports[1], ports[2]
		s.BaseURL = fmt.Sprintf("https://127.0.0.1:%d", s.Port)
		offset := s.logSize()
		lastErr = s.startAndWait()
		if lastErr == nil {
			return s, nil
		}
		_ = s.Kill()
		if !strings.Contains(s.LogTail(offset, 0), "address already in use") {
			break
		}
	}
	return nil, fmt.Errorf("%w\nroot directory kept: %s\nmeshplane log (%s), last %d lines:\n%s", lastErr, s.RootDir, s.LogPath, dumpLines, s.LogTail(0, dumpLines))
}

const dumpLines = 300

func defaultStartTimeout() time.Duration {
	if v := os.Getenv("MESHPLANE_E2E_START_TIMEOUT"); v != "" {
		if d, err := time.ParseDuration(v); err == nil {
			return d
		}
	}
	return 3 * time.Minute
}

func keepDirs() bool { return os.Getenv("MESHPLANE_E2E_KEEP") != "" }

// shareCredentials copies root's CA, admin tokens and service-account
// signing key into the root directory (the server uses files it finds
// there).
func (s *Server) shareCredentials(root *Server) error {
	for _, f := range []string{"ca.crt", "ca.key", "admin-tokens", "service-account.key"} {
		b, err := os.ReadFile(filepath.Join(root.RootDir, f))
		if err != nil {
			return fmt.Errorf("sharing credentials of %s: %w", root.RootDir, err)
		}
		if err := os.WriteFile(filepath.Join(s.RootDir, f), b, 0o600); err != nil {
			return err
		}
	}
	return nil
}

func (s *Server) writeTokenFile(users []TokenUser) error {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	for _, u := range users {
		if u.Token == "" {
			u.Token = randomHex(16)
		}
		if u.UID == "" {
			u.UID = "uid-" + u.Name
		}
		s.users[u.Name] = u
		rec := []string{u.Token, u.Name, u.UID}
		if len(u.Groups) > 0 {
			rec = append(rec, strings.Join(u.Groups, ","))
		}
		if err := w.Write(rec); err != nil {
			return err
		}
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return err
	}
	return os.WriteFile(s.TokenFile, buf.Bytes(), 0o600)
}

func (s *Server) args() []string {
	a := []string{
		"start",
		"--root-directory", s.RootDir,
		"--bind-address", "127.0.0.1",
		"--secure-port", strconv.Itoa(s.Port),
		"--embedded-etcd-client-port", strconv.Itoa(s.EtcdClientPort),
		"--embedded-etcd-peer-port", strconv.Itoa(s.EtcdPeerPort),
		"--token-auth-file", s.TokenFile,
	}
	return append(a, s.extraArgs...)
}

// startAndWait launches the process and waits for readiness.
func (s *Server) startAndWait() error {
	p, err := s.launch()
	if err != nil {
		return err
	}
	return s.waitReady(p)
}

func (s *Server) launch() (*process.Process, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.External {
		return nil, errors.New("an external meshplane cannot be started by the kit")
	}
	if s.proc != nil {
		return nil, errors.New("meshplane is already running")
	}
	lf, err := os.OpenFile(s.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	args := s.args()
	fmt.Fprintf(lf, "\n===== %s framework: starting %s %s =====\n", time.Now().Format(time.RFC3339Nano), s.binary, strings.Join(args, " "))
	cmd := exec.Command(s.binary, args...)
	cmd.Dir = s.RootDir
	cmd.Stdout = lf
	cmd.Stderr = lf
	p, err := process.StartProcess(cmd)
	if err != nil {
		lf.Close()
		return nil, err
	}
	s.proc = p
	s.PID = p.PID()
	s.kcfg = nil // the server may write a new kubeconfig
	go func() {
		<-p.Exited()
		fmt.Fprintf(lf, "\n===== %s framework: meshplane (pid %d) exited: %v =====\n", time.Now().Format(time.RFC3339Nano), p.PID(), p.ExitErr())
		lf.Close()
	}()
	return p, nil
}

func (s *Server) waitReady(p *process.Process) error {
	ctx, cancel := context.WithTimeout(context.Background(), s.startTimeout)
	defer cancel()
	if _, err := process.WaitReady(ctx, s.BaseURL+"/readyz", 250*time.Millisecond, p.Exited()); err != nil {
		if !p.Running() {
			return fmt.Errorf("meshplane exited before becoming ready (%v): %w", p.ExitErr(), err)
		}
		return fmt.Errorf("meshplane not ready after %s: %w", s.startTimeout, err)
	}
	// /readyz is 200: the admin kubeconfig is written around that time.
	for {
		_, err := s.loadKubeconfig()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("/readyz is 200 but %s is not usable: %v", s.Kubeconfig, err)
		case <-p.Exited():
			return fmt.Errorf("meshplane exited after becoming ready: %v", p.ExitErr())
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// Running reports whether the process is alive (always true for an
// external server).
func (s *Server) Running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.External {
		return true
	}
	return s.proc != nil && s.proc.Running()
}

// Stop sends SIGTERM and waits up to a minute for a graceful exit (then
// SIGKILL). It returns an error if the process had to be killed or exited
// with an error after SIGTERM. Stopping a stopped (or external) server is a
// no-op.
func (s *Server) Stop() error {
	p := s.forget()
	if p == nil {
		return nil
	}
	if !p.Running() {
		return fmt.Errorf("meshplane had already exited before Stop: %v", p.ExitErr())
	}
	if err := p.Stop(time.Minute); err != nil {
		return fmt.Errorf("meshplane: %w", err)
	}
	if err := p.ExitErr(); err != nil {
		return fmt.Errorf("meshplane did not exit cleanly on SIGTERM: %v", err)
	}
	return nil
}

// Kill sends SIGKILL and waits for the process to be gone.
func (s *Server) Kill() error {
	p := s.forget()
	if p == nil {
		return nil
	}
	if err := p.Kill(); err != nil {
		return fmt.Errorf("meshplane: %w", err)
	}
	return nil
}

// forget drops the process and returns it (nil when none).
func (s *Server) forget() *process.Process {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.proc
	s.proc = nil
	return p
}

// Restart starts the server again with the same root directory and ports,
// stopping it gracefully first if it is still running, and waits for
// readiness. Clients built before the restart may hold stale credentials if
// the server rewrites admin.kubeconfig: build new ones.
func (s *Server) Restart() error {
	if s.External {
		return errors.New("an external meshplane cannot be restarted by the kit")
	}
	if s.Running() {
		if err := s.Stop(); err != nil {
			return err
		}
	} else {
		s.forget()
	}
	if err := s.startAndWait(); err != nil {
		return fmt.Errorf("%w\nmeshplane log (%s), last %d lines:\n%s", err, s.LogPath, dumpLines, s.LogTail(0, dumpLines))
	}
	return nil
}

// Cleanup stops the server and removes its root directory unless
// MESHPLANE_E2E_KEEP is set or keep is true.
func (s *Server) Cleanup(keep bool) error {
	err := s.Stop()
	if s.External {
		os.RemoveAll(s.RootDir)
		return err
	}
	if keep || keepDirs() {
		fmt.Fprintf(os.Stderr, "framework: meshplane root directory kept: %s\n", s.RootDir)
	} else {
		s.removeRootDir()
	}
	return err
}

func (s *Server) removeRootDir() {
	if s.ownsRootDir && !s.Running() {
		os.RemoveAll(s.RootDir)
	}
}

func (s *Server) logSize() int64 {
	if s.LogPath == "" {
		return 0
	}
	st, err := os.Stat(s.LogPath)
	if err != nil {
		return 0
	}
	return st.Size()
}

// LogTail returns the log written since byte offset from, limited to its
// last maxLines lines (all lines when maxLines <= 0).
func (s *Server) LogTail(from int64, maxLines int) string {
	if s.External {
		return "(external server: its log is not available to the kit)"
	}
	f, err := os.Open(s.LogPath)
	if err != nil {
		return fmt.Sprintf("(cannot read log: %v)", err)
	}
	defer f.Close()
	if _, err := f.Seek(from, io.SeekStart); err != nil {
		return fmt.Sprintf("(cannot read log: %v)", err)
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return fmt.Sprintf("(cannot read log: %v)", err)
	}
	text := strings.TrimRight(string(data), "\n")
	if maxLines > 0 {
		lines := strings.Split(text, "\n")
		if len(lines) > maxLines {
			text = fmt.Sprintf("... (%d earlier lines in %s)\n", len(lines)-maxLines, s.LogPath) +
				strings.Join(lines[len(lines)-maxLines:], "\n")
		}
	}
	return text
}

// DumpLogsOnFailure logs the server output written during the rest of the
// test if the test fails.
func (s *Server) DumpLogsOnFailure(t testing.TB) {
	if s.External {
		return
	}
	from := s.logSize()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("meshplane log written during %s (%s), last %d lines:\n%s", t.Name(), s.LogPath, dumpLines, s.LogTail(from, dumpLines))
		}
	})
}

// AdminContexts are the contexts of the admin kubeconfig a meshplane core
// writes: root and base act as kcp-admin, shard-base as the shard admin
// (system:masters).
var AdminContexts = []string{"root", "base", "shard-base"}

func (s *Server) loadKubeconfig() (*clientcmdapi.Config, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.kcfg != nil {
		return s.kcfg, nil
	}
	cfg, err := clientcmd.LoadFromFile(s.Kubeconfig)
	if err != nil {
		return nil, err
	}
	for _, name := range AdminContexts {
		if _, ok := cfg.Contexts[name]; !ok {
			return nil, fmt.Errorf("context %q missing", name)
		}
	}
	s.kcfg = cfg
	return cfg, nil
}

// KubeconfigData returns the parsed admin kubeconfig.
func (s *Server) KubeconfigData(t testing.TB) *clientcmdapi.Config {
	t.Helper()
	cfg, err := s.loadKubeconfig()
	if err != nil {
		t.Fatalf("loading %s: %v", s.Kubeconfig, err)
	}
	return cfg.DeepCopy()
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}
