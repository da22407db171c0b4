package main

import (
	"context"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/meshplane/meshplane/sdk/process"
	"github.com/meshplane/meshplane/sdk/testing/framework"
	"github.com/meshplane/meshplane/sdk/testing/postgres"
)

// TestOpenFGAPostgresAsRendered runs the chart's OpenFGA on PostgreSQL
// (openfga.datastore.engine=postgres) as rendered: the migrate init
// container and the server, the URI from the user's Secret (a real
// PostgreSQL server here), the preshared key from the chart's Secret. It
// answers only calls with the key.
func TestOpenFGAPostgresAsRendered(t *testing.T) {
	root, err := framework.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	objs := renderChart(t, root, "--set", "openfga.datastore.engine=postgres", "--set", "openfga.datastore.postgres.uriSecret.name=fga-db")
	spec := objs["Deployment/mp-openfga"].(*appsv1.Deployment).Spec.Template.Spec
	key := string(objs["Secret/mp-openfga-key"].(*corev1.Secret).Data["key"])
	dsn := postgres.ForTest(t).DSN("")
	ports, err := process.FreePorts(3)
	if err != nil {
		t.Fatal(err)
	}
	addr := func(i int) string { return "127.0.0.1:" + strconv.Itoa(ports[i]) }
	local := strings.NewReplacer("0.0.0.0:8080", addr(0), "0.0.0.0:8081", addr(1), "0.0.0.0:2112", addr(2))
	env := func(c corev1.Container) []string {
		e := []string{"HOME=" + t.TempDir()}
		for _, v := range c.Env {
			switch {
			case v.ValueFrom == nil:
				e = append(e, v.Name+"="+v.Value)
			case v.ValueFrom.SecretKeyRef != nil && v.ValueFrom.SecretKeyRef.Name == "fga-db" && v.ValueFrom.SecretKeyRef.Key == "uri":
				e = append(e, v.Name+"="+dsn)
			case v.ValueFrom.SecretKeyRef != nil && v.ValueFrom.SecretKeyRef.Name == "mp-openfga-key":
				e = append(e, v.Name+"="+key)
			default:
				t.Fatalf("%s: environment from %+v", c.Name, v.ValueFrom)
			}
		}
		return e
	}
	args := func(c corev1.Container) []string {
		var out []string
		for _, a := range c.Args {
			out = append(out, local.Replace(a))
		}
		return out
	}
	bin, err := framework.Binary("openfga", "operators", "./cmd/openfga")
	if err != nil {
		t.Fatal(err)
	}
	if len(spec.Volumes) != 1 || spec.Volumes[0].Name != "tmp" {
		t.Errorf("OpenFGA on PostgreSQL has volumes %v, want /tmp only", spec.Volumes)
	}
	migrate := exec.Command(bin, args(spec.InitContainers[0])...)
	migrate.Env = env(spec.InitContainers[0])
	if out, err := migrate.CombinedOutput(); err != nil {
		t.Fatalf("migrate: %v: %s", err, out)
	}
	run := exec.Command(bin, args(spec.Containers[0])...)
	run.Env = env(spec.Containers[0])
	p := startLogged(t, "openfga", run, 30)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := process.WaitReady(ctx, "http://"+addr(0)+"/healthz", 250*time.Millisecond, p.Exited()); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		token string
		want  int
	}{{"", http.StatusUnauthorized}, {key, http.StatusOK}} {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr(0)+"/stores", nil)
		if tc.token != "" {
			req.Header.Set("Authorization", "Bearer "+tc.token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("GET /stores (key given: %v): %d, want %d", tc.token != "", resp.StatusCode, tc.want)
		}
	}
}
