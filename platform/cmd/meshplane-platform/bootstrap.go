package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/meshplane/meshplane/platform/launcher"
)

// credentialMount is where the charts mount a credential Secret: its
// kubeconfig names the token file there.
const credentialMount = "/var/run/meshplane/credential"

// bootstrapCmd is the Helm chart's platform bootstrap, run in the cluster
// as a Deployment with kcp-admin's kubeconfig: it applies the bootstrap
// (idempotent, so every upgrade runs it again), mints the scoped
// credentials `make run` gives the operators and example providers, and
// keeps them in Secrets <prefix>-<name>-credential (keys kubeconfig and
// token) of --namespace, renewing the tokens as the launcher does, until
// it is stopped. /readyz answers 200 once every Secret is written.
func bootstrapCmd(args []string) int {
	fs := flag.NewFlagSet("meshplane-platform bootstrap", flag.ContinueOnError)
	kubeconfig := fs.String("kubeconfig", "", "kcp-admin's kubeconfig of the root shard, context base (required).")
	namespace := fs.String("namespace", "", "Namespace of the credential Secrets (required).")
	prefix := fs.String("secret-prefix", "", "Prefix of the Secrets' names, the Helm release (required).")
	ttl := fs.Duration("token-ttl", launcher.DefaultOperatorTokenTTL, "Lifetime of the ServiceAccount tokens (at least 10m); renewed at 80%.")
	examples := fs.String("examples", "", "Example providers to set up, comma-separated: "+strings.Join(launcher.Examples, ", ")+".")
	examplesDir := fs.String("examples-dir", "", "Directory of the examples' manifests (<name>/config/...).")
	health := fs.String("health-address", "127.0.0.1:8081", "Address of /healthz and /readyz.")
	owner := fs.String("owner-service-account", "", "ServiceAccount of --namespace that owns the Secrets, so they go with it (helm uninstall); empty: none.")
	dir := fs.String("work-directory", filepath.Join(os.TempDir(), "meshplane-bootstrap"), "Directory for the credentials' files.")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if *kubeconfig == "" || *namespace == "" || *prefix == "" || fs.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "meshplane-platform bootstrap: --kubeconfig, --namespace and --secret-prefix are required")
		return 2
	}
	if *ttl < 10*time.Minute {
		fmt.Fprintf(os.Stderr, "meshplane-platform bootstrap: --token-ttl %s: TokenRequest allows no less than 10m\n", *ttl)
		return 2
	}
	var names []string
	for _, e := range strings.Split(*examples, ",") {
		if e = strings.TrimSpace(e); e != "" {
			names = append(names, e)
		}
	}
	if err := launcher.ValidateExamples(names); err != nil {
		fmt.Fprintln(os.Stderr, "meshplane-platform bootstrap:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	logf := func(format string, args ...any) {
		fmt.Fprintf(os.Stderr, "%s %s\n", time.Now().UTC().Format(time.RFC3339), fmt.Sprintf(format, args...))
	}
	var ready atomic.Bool
	go serveHealth(ctx, *health, &ready, logf)

	host, err := rest.InClusterConfig()
	if err != nil {
		logf("not in a cluster: %v", err)
		return 1
	}
	hc, err := kubernetes.NewForConfig(host)
	if err != nil {
		logf("%v", err)
		return 1
	}
	if err := os.MkdirAll(*dir, 0o700); err != nil {
		logf("%v", err)
		return 1
	}
	ic := &launcher.InCluster{AdminKubeconfig: *kubeconfig, Dir: *dir, Examples: names, ExamplesDir: *examplesDir, TokenTTL: *ttl, Logf: logf}
	// The core may still be starting: try again until it answers.
	for {
		if err = ic.Run(ctx); err == nil {
			break
		}
		if ctx.Err() != nil {
			return 1
		}
		logf("bootstrap (retrying in 10s): %v", err)
		select {
		case <-ctx.Done():
			return 1
		case <-time.After(10 * time.Second):
		}
	}
	s := &secretSync{client: hc, namespace: *namespace, prefix: *prefix, dir: *dir, names: credentialNames(names)}
	if *owner != "" {
		for {
			sa, err := hc.CoreV1().ServiceAccounts(*namespace).Get(ctx, *owner, metav1.GetOptions{})
			if err == nil {
				s.owner = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ServiceAccount", Name: sa.Name, UID: sa.UID}}
				break
			}
			logf("reading the owner ServiceAccount %s (retrying in 10s): %v", *owner, err)
			select {
			case <-ctx.Done():
				return 1
			case <-time.After(10 * time.Second):
			}
		}
	}
	for {
		if err := s.sync(ctx); err != nil {
			logf("writing the credential Secrets (retrying): %v", err)
		} else if !ready.Load() {
			ready.Store(true)
			logf("the platform is bootstrapped; credentials are in Secrets %s-<name>-credential", *prefix)
		}
		select {
		case <-ctx.Done():
			return 0
		case <-time.After(15 * time.Second):
		}
	}
}

// credentialNames are the credentials InCluster writes for these examples.
func credentialNames(examples []string) []string {
	names := append([]string{}, launcher.Credentials...)
	for _, e := range examples {
		names = append(names, e+"-provider")
	}
	return names
}

// secretSync copies the credentials' files into Secrets when they change.
type secretSync struct {
	client            kubernetes.Interface
	namespace, prefix string
	dir               string
	names             []string
	// owner owns every Secret written (none when empty).
	owner   []metav1.OwnerReference
	written map[string][]byte
}

func (s *secretSync) sync(ctx context.Context) error {
	if s.written == nil {
		s.written = map[string][]byte{}
	}
	var errs []error
	for _, name := range s.names {
		data, err := s.credential(name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		errs = append(errs, s.apply(ctx, s.prefix+"-"+name+"-credential", data))
	}
	if _, err := os.Stat(filepath.Join(s.dir, "mongodb-downstream.kubeconfig")); err == nil {
		b, err := os.ReadFile(filepath.Join(s.dir, "mongodb-downstream.kubeconfig"))
		if err != nil {
			errs = append(errs, err)
		} else {
			errs = append(errs, s.apply(ctx, s.prefix+"-mongodb-downstream-kubeconfig", map[string][]byte{"kubeconfig": b}))
		}
	}
	return errors.Join(errs...)
}

// credential is the Secret data of credential name: its kubeconfig, whose
// token file is the mounted Secret's, and the current token.
func (s *secretSync) credential(name string) (map[string][]byte, error) {
	cfg, err := clientcmd.LoadFromFile(filepath.Join(s.dir, name+".kubeconfig"))
	if err != nil {
		return nil, err
	}
	for _, ai := range cfg.AuthInfos {
		ai.TokenFile = credentialMount + "/token"
	}
	kc, err := clientcmd.Write(*cfg)
	if err != nil {
		return nil, err
	}
	token, err := os.ReadFile(filepath.Join(s.dir, name+".token"))
	if err != nil {
		return nil, err
	}
	return map[string][]byte{"kubeconfig": kc, "token": token}, nil
}

// apply creates or updates Secret name with data, unless it was written
// with this data already.
func (s *secretSync) apply(ctx context.Context, name string, data map[string][]byte) error {
	sum := flatten(data)
	if bytes.Equal(s.written[name], sum) {
		return nil
	}
	secrets := s.client.CoreV1().Secrets(s.namespace)
	cur, err := secrets.Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		_, err = secrets.Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: s.namespace, OwnerReferences: s.owner, Labels: map[string]string{
				"app.kubernetes.io/part-of": "meshplane", "app.kubernetes.io/instance": s.prefix, "app.kubernetes.io/managed-by": "meshplane-bootstrap"}},
			Type: corev1.SecretTypeOpaque, Data: data,
		}, metav1.CreateOptions{})
	case err == nil:
		cur.Data = data
		if len(s.owner) > 0 {
			cur.OwnerReferences = s.owner
		}
		_, err = secrets.Update(ctx, cur, metav1.UpdateOptions{})
	}
	if err != nil {
		return fmt.Errorf("secret %s/%s: %w", s.namespace, name, err)
	}
	s.written[name] = sum
	return nil
}

func flatten(data map[string][]byte) []byte {
	var b bytes.Buffer
	for _, k := range []string{"kubeconfig", "token"} {
		b.WriteString(k)
		b.WriteByte(0)
		b.Write(data[k])
		b.WriteByte(0)
	}
	return b.Bytes()
}

// serveHealth answers /healthz always and /readyz once ready is set.
func serveHealth(ctx context.Context, addr string, ready *atomic.Bool, logf func(string, ...any)) {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !ready.Load() {
			http.Error(w, "bootstrapping", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok"))
	})
	srv := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		logf("health server: %v", err)
	}
}
