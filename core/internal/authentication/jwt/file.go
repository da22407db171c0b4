package jwt

import (
	"bytes"
	"context"
	"os"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/apis/apiserver"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/klog/v2"
)

// ReloadInterval is how often the configuration file is read again.
// kube-apiserver watches it too; reading a small file is cheap.
var ReloadInterval = 5 * time.Second

// healthyTimeout bounds how long a changed configuration may take to fetch
// its issuers' keys before it replaces the running one (kube-apiserver
// waits the same way, so a typo in an issuer URL does not lock everyone out).
const healthyTimeout = 10 * time.Second

// File authenticates with the configuration of a file and follows the
// file: a changed file that is valid and whose issuers answer replaces the
// running authenticators; an invalid one is logged and the running
// configuration stays, as in kube-apiserver. A valid one whose issuers do
// not answer within 10s is tried again on the next round.
type File struct {
	path    string
	opts    Options
	initial *apiserver.AuthenticationConfiguration
	data    []byte

	current atomic.Pointer[Authenticator]
}

// NewFile loads and validates the file; a bad file is an error before
// anything starts. Nothing runs until Run.
func NewFile(path string, opts Options) (*File, error) {
	c, data, err := Load(path, opts.DisallowedIssuers)
	if err != nil {
		return nil, err
	}
	return &File{path: path, opts: opts, initial: c, data: data}, nil
}

// AuthenticateToken implements authenticator.Token; before Run it
// authenticates nobody.
func (f *File) AuthenticateToken(ctx context.Context, token string) (*authenticator.Response, bool, error) {
	a := f.current.Load()
	if a == nil {
		return nil, false, nil
	}
	return a.AuthenticateToken(ctx, token)
}

// Start builds the authenticators of the loaded file and follows the file
// until ctx ends.
func (f *File) Start(ctx context.Context) error {
	a, err := New(ctx, f.initial.JWT, f.opts)
	if err != nil {
		return err
	}
	f.current.Store(a)
	go wait.UntilWithContext(ctx, f.reload, ReloadInterval)
	return nil
}

func (f *File) reload(ctx context.Context) {
	logger := klog.FromContext(ctx).WithValues("file", f.path)
	data, err := os.ReadFile(f.path)
	if err != nil {
		logger.Error(err, "Reading the authentication configuration; keeping the running one")
		return
	}
	if bytes.Equal(data, f.data) {
		return
	}
	c, err := Parse(data, f.opts.DisallowedIssuers)
	if err != nil {
		f.data = data // not tried again until the file changes
		logger.Error(err, "Invalid authentication configuration; keeping the running one")
		return
	}
	a, err := New(ctx, c.JWT, f.opts)
	if err != nil {
		f.data = data
		logger.Error(err, "Building the authenticators; keeping the running ones")
		return
	}
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, healthyTimeout, true, func(context.Context) (bool, error) {
		return a.Healthy() == nil, nil
	}); err != nil {
		// Tried again on the next round: the issuers may come up.
		logger.Error(a.Healthy(), "The changed authentication configuration's issuers did not answer; keeping the running one")
		a.Stop()
		return
	}
	f.data = data
	if old := f.current.Swap(a); old != nil {
		old.Stop()
	}
	logger.Info("Reloaded the authentication configuration", "issuers", len(c.JWT))
}
