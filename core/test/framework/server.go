package framework

import (
	"bytes"
	"crypto/rand"
	"crypto/tls"
	"encoding/csv"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// TokenUser is a user known to the server through --token-auth-file.
type TokenUser struct {
	Name   string
	UID    string
	Groups []string
	// Token is generated when empty.
	Token string
}

// DefaultTokenUsers are added to every server started by the framework.
// None of them is in system:masters, so they are authorized by RBAC only.
var DefaultTokenUsers = []TokenUser{
	{Name: "alice", UID: "uid-alice", Groups: []string{"e2e:users"}},
	{Name: "bob", UID: "uid-bob", Groups: []string{"e2e:users"}},
	{Name: "carol", UID: "uid-carol"},
}

// Options configure a server started by the framework.
type Options struct {
	// TokenUsers are written to the --token-auth-file (DefaultTokenUsers when nil).
	TokenUsers []TokenUser
	// ExtraArgs are appended to `meshplane start`.
	ExtraArgs []string
	// StartTimeout bounds the wait for /readyz.
	StartTimeout time.Duration
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

// Server is a meshplane process started by the framework.
type Server struct {
	// RootDir is the --root-directory; it holds the log and admin.kubeconfig.
	RootDir string
	// Port is the --secure-port.
	Port int
	// EtcdClientPort and EtcdPeerPort are the embedded etcd ports.
	EtcdClientPort int
	EtcdPeerPort   int
	// Kubeconfig is RootDir/admin.kubeconfig, written by the server.
	Kubeconfig string
	// BaseURL is https://127.0.0.1:<Port>.
	BaseURL string
	// PID of the running process (of the last start).
	PID int
	// LogPath is the file receiving the server's stdout and stderr.
	LogPath string
	// TokenFile is the --token-auth-file.
	TokenFile string

	binary       string
	extraArgs    []string
	startTimeout time.Duration
	users        map[string]TokenUser
	ownsRootDir  bool

	mu      sync.Mutex
	cmd     *exec.Cmd
	exited  chan struct{}
	waitErr error
	kcfg    *clientcmdapi.Config
}

// StartServer starts a dedicated server for one test (or benchmark). It is
// stopped when the test ends; its log is dumped if the test failed, and its
// root directory is removed unless the test failed or MESHPLANE_E2E_KEEP is set.
func StartServer(t testing.TB, opts ...Option) *Server {
	t.Helper()
	s, err := NewServer(opts...)
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

// NewServer starts a server outside of a test (for example from TestMain) and
// waits until it is ready. The caller must Stop it (and may call Cleanup).
func NewServer(opts ...Option) (*Server, error) {
	o := Options{TokenUsers: DefaultTokenUsers, StartTimeout: defaultStartTimeout()}
	for _, opt := range opts {
		opt(&o)
	}
	if extra := strings.Fields(os.Getenv("MESHPLANE_E2E_ARGS")); len(extra) > 0 {
		o.ExtraArgs = append(o.ExtraArgs, extra...)
	}
	bin, err := Binary()
	if err != nil {
		return nil, err
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
	if err := s.writeTokenFile(o.TokenUsers); err != nil {
		return nil, err
	}

	// Free ports are picked by listening on 127.0.0.1:0 and closing the
	// listener, so another process may grab one in between: retry with new
	// ports when the server reports a bind failure.
	var lastErr error
	for attempt := 1; attempt <= 3; attempt++ {
		ports, err := freePorts(3)
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
	if err := s.launch(); err != nil {
		return err
	}
	return s.waitReady()
}

func (s *Server) launch() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		return errors.New("meshplane is already running")
	}
	lf, err := os.OpenFile(s.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	args := s.args()
	fmt.Fprintf(lf, "\n===== %s framework: starting %s %s =====\n", time.Now().Format(time.RFC3339Nano), s.binary, strings.Join(args, " "))
	cmd := exec.Command(s.binary, args...)
	cmd.Dir = s.RootDir
	cmd.Stdout = lf
	cmd.Stderr = lf
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		lf.Close()
		return fmt.Errorf("starting %s: %w", s.binary, err)
	}
	exited := make(chan struct{})
	s.cmd = cmd
	s.exited = exited
	s.waitErr = nil
	s.PID = cmd.Process.Pid
	s.kcfg = nil // the server may write a new kubeconfig
	go func() {
		err := cmd.Wait()
		fmt.Fprintf(lf, "\n===== %s framework: meshplane (pid %d) exited: %v =====\n", time.Now().Format(time.RFC3339Nano), cmd.Process.Pid, err)
		lf.Close()
		s.mu.Lock()
		s.waitErr = err
		s.mu.Unlock()
		close(exited)
	}()
	return nil
}

func (s *Server) waitReady() error {
	s.mu.Lock()
	exited := s.exited
	s.mu.Unlock()
	client := insecureHTTPClient(5 * time.Second)
	defer client.CloseIdleConnections()
	deadline := time.Now().Add(s.startTimeout)
	last := "no answer yet"
	for {
		select {
		case <-exited:
			s.mu.Lock()
			err := s.waitErr
			s.mu.Unlock()
			return fmt.Errorf("meshplane exited before becoming ready: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("meshplane not ready after %s (last /readyz: %s)", s.startTimeout, last)
		}
		resp, err := client.Get(s.BaseURL + "/readyz")
		if err != nil {
			last = err.Error()
		} else {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
			resp.Body.Close()
			last = fmt.Sprintf("%d %s", resp.StatusCode, strings.TrimSpace(string(body)))
			if resp.StatusCode == http.StatusOK {
				if _, err := s.loadKubeconfig(); err != nil {
					last = fmt.Sprintf("/readyz is 200 but %s is not usable: %v", s.Kubeconfig, err)
				} else {
					return nil
				}
			}
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// Running reports whether the process is alive.
func (s *Server) Running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return false
	}
	select {
	case <-s.exited:
		return false
	default:
		return true
	}
}

// Stop sends SIGTERM and waits up to a minute for a graceful exit (then
// SIGKILL). It returns an error if the process had to be killed or exited
// with an error after SIGTERM. Stopping a stopped server is a no-op.
func (s *Server) Stop() error {
	s.mu.Lock()
	cmd, exited := s.cmd, s.exited
	s.mu.Unlock()
	if cmd == nil {
		return nil
	}
	defer s.forget()
	select {
	case <-exited:
		s.mu.Lock()
		err := s.waitErr
		s.mu.Unlock()
		return fmt.Errorf("meshplane had already exited before Stop: %v", err)
	default:
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
		s.mu.Lock()
		err := s.waitErr
		s.mu.Unlock()
		if err != nil {
			return fmt.Errorf("meshplane did not exit cleanly on SIGTERM: %v", err)
		}
		return nil
	case <-time.After(time.Minute):
		_ = cmd.Process.Kill()
		<-exited
		return errors.New("meshplane did not stop within 1m of SIGTERM and was killed")
	}
}

// Kill sends SIGKILL and waits for the process to be gone.
func (s *Server) Kill() error {
	s.mu.Lock()
	cmd, exited := s.cmd, s.exited
	s.mu.Unlock()
	if cmd == nil {
		return nil
	}
	defer s.forget()
	_ = cmd.Process.Kill()
	select {
	case <-exited:
		return nil
	case <-time.After(30 * time.Second):
		return fmt.Errorf("meshplane (pid %d) still running 30s after SIGKILL", cmd.Process.Pid)
	}
}

func (s *Server) forget() {
	s.mu.Lock()
	s.cmd = nil
	s.mu.Unlock()
}

// Restart starts the server again with the same root directory and ports,
// stopping it gracefully first if it is still running, and waits for
// readiness. Clients built before the restart may hold stale credentials if
// the server rewrites admin.kubeconfig: build new ones.
func (s *Server) Restart() error {
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
	st, err := os.Stat(s.LogPath)
	if err != nil {
		return 0
	}
	return st.Size()
}

// LogTail returns the log written since byte offset from, limited to its
// last maxLines lines (all lines when maxLines <= 0).
func (s *Server) LogTail(from int64, maxLines int) string {
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
	from := s.logSize()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("meshplane log written during %s (%s), last %d lines:\n%s", t.Name(), s.LogPath, dumpLines, s.LogTail(from, dumpLines))
		}
	})
}

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
	for _, name := range []string{"root", "base", "shard-base"} {
		if _, ok := cfg.Contexts[name]; !ok {
			return nil, fmt.Errorf("context %q missing", name)
		}
	}
	s.kcfg = cfg
	return cfg, nil
}

// KubeconfigData returns the parsed admin.kubeconfig.
func (s *Server) KubeconfigData(t testing.TB) *clientcmdapi.Config {
	t.Helper()
	cfg, err := s.loadKubeconfig()
	if err != nil {
		t.Fatalf("loading %s: %v", s.Kubeconfig, err)
	}
	return cfg.DeepCopy()
}

func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	ports := make([]int, 0, n)
	for i := 0; i < n; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("finding a free port: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

func insecureHTTPClient(timeout time.Duration) *http.Client {
	return &http.Client{
		Timeout: timeout,
		Transport: &http.Transport{
			TLSClientConfig:   &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // test server with a self-signed certificate
			ForceAttemptHTTP2: true,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}
