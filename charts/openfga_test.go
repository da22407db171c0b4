package charts

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// TestOpenFGAAsRendered runs the OpenFGA pod of the chart on this machine:
// the migrate init container, then the server with the rendered arguments
// and environment (the preshared key from the rendered Secret), on
// loopback ports and a temporary SQLite file. It answers only calls with
// the key.
func TestOpenFGAAsRendered(t *testing.T) {
	out, err := render(t, umbrellaDir(t))
	if err != nil {
		t.Fatal(err)
	}
	objs, err := decodeStrict(out)
	if err != nil {
		t.Fatal(err)
	}
	spec := podSpecs(objs)["Deployment/mp-openfga"]
	key := string(find[*corev1.Secret](t, objs, "Secret", "mp-openfga-key").Data["key"])
	if len(key) < 32 {
		t.Fatalf("OpenFGA's key is %d characters", len(key))
	}
	ports := freePorts(t, 3)
	replace := strings.NewReplacer("/var/lib/openfga", t.TempDir(),
		"0.0.0.0:8080", "127.0.0.1:"+strconv.Itoa(ports[0]), "0.0.0.0:8081", "127.0.0.1:"+strconv.Itoa(ports[1]),
		"0.0.0.0:2112", "127.0.0.1:"+strconv.Itoa(ports[2]))
	env := func(c corev1.Container) []string {
		e := []string{"HOME=" + t.TempDir()}
		for _, v := range c.Env {
			switch {
			case v.ValueFrom == nil:
				e = append(e, v.Name+"="+v.Value)
			case v.ValueFrom.SecretKeyRef != nil && v.ValueFrom.SecretKeyRef.Name == "mp-openfga-key":
				e = append(e, v.Name+"="+key)
			default:
				t.Fatalf("%s: environment from %+v", c.Name, v.ValueFrom)
			}
		}
		return e
	}
	bin := binaryPath(t, "openfga")
	localArgs := func(c corev1.Container) []string {
		var a []string
		for _, arg := range c.Args {
			a = append(a, replace.Replace(arg))
		}
		return a
	}
	migrate := spec.InitContainers[0]
	cmd := exec.Command(bin, localArgs(migrate)...)
	cmd.Env = env(migrate)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("migrate: %v: %s", err, b)
	}
	run := spec.Containers[0]
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	server := exec.CommandContext(ctx, bin, localArgs(run)...)
	server.Env = env(run)
	var logs bytes.Buffer
	server.Stdout, server.Stderr = &logs, &logs
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- server.Wait() }()
	defer func() {
		cancel()
		<-done
		if t.Failed() {
			t.Logf("openfga log:\n%s", logs.String())
		}
	}()
	base := "http://127.0.0.1:" + strconv.Itoa(ports[0])
	get := func(path, token string) (int, error) {
		req, err := http.NewRequest(http.MethodGet, base+path, nil)
		if err != nil {
			return 0, err
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	deadline := time.Now().Add(time.Minute)
	for {
		code, err := get("/healthz", "")
		if err == nil && code == http.StatusOK {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("openfga exited: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("openfga /healthz: %d %v", code, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	for _, tc := range []struct {
		token string
		want  int
	}{{"", http.StatusUnauthorized}, {"not-the-key", http.StatusUnauthorized}, {key, http.StatusOK}} {
		code, err := get("/stores", tc.token)
		if err != nil {
			t.Fatal(err)
		}
		if code != tc.want {
			t.Errorf("GET /stores with token %q: %d, want %d", redact(tc.token, key), code, tc.want)
		}
	}
}

func redact(token, key string) string {
	if token == key {
		return "<the key>"
	}
	return token
}

func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ports []int
	for i := 0; i < n; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports
}
