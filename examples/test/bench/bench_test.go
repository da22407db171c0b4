package bench

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/meshplane/meshplane/examples/internal/exampletest"
	mongodbv1alpha1 "github.com/meshplane/meshplane/examples/mongodb/api/v1alpha1"
	"github.com/meshplane/meshplane/examples/mongodb/controller"
	postgresv1alpha1 "github.com/meshplane/meshplane/examples/postgres/api/v1alpha1"
	"github.com/meshplane/meshplane/sdk/testing/framework"
	"github.com/meshplane/meshplane/sdk/testing/postgres"
)

// n is how many objects each figure is taken over (EX_BENCH_N, default 20).
func n() int {
	var v int
	if _, err := fmt.Sscan(os.Getenv("EX_BENCH_N"), &v); err != nil || v < 1 {
		return 20
	}
	return v
}

var claims = []any{map[string]any{"group": "", "resource": "secrets", "verbs": []any{"get", "create", "update", "delete"},
	"selector": map[string]any{"matchAll": true}, "state": "Accepted"}}

type figures struct{ rows []string }

func (f *figures) add(what string, d []time.Duration) {
	slices.Sort(d)
	q := func(p float64) time.Duration { return d[int(p*float64(len(d)-1))].Round(time.Millisecond) }
	f.rows = append(f.rows, fmt.Sprintf("| %s | %d | %v | %v | %v |", what, len(d), q(0.5), q(0.95), d[len(d)-1].Round(time.Millisecond)))
}

func (f *figures) write(t *testing.T) {
	out := "| figure | n | p50 | p95 | max |\n| --- | --- | --- | --- | --- |\n" + strings.Join(f.rows, "\n") + "\n"
	t.Log("\n" + out)
	if path := os.Getenv("EX_BENCH_OUT"); path != "" {
		if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// waitAll polls get for every name until done says so; it returns the
// time from start to the first poll that saw it.
func waitAll(t *testing.T, names []string, start map[string]time.Time, what string, done func(name string) bool) []time.Duration {
	t.Helper()
	var out []time.Duration
	pending := slices.Clone(names)
	deadline := time.Now().Add(5 * time.Minute)
	for len(pending) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d not done after 5m: %v", what, len(pending), pending)
		}
		pending = slices.DeleteFunc(pending, func(name string) bool {
			if done(name) {
				out = append(out, time.Since(start[name]))
				return true
			}
			return false
		})
		time.Sleep(20 * time.Millisecond)
	}
	return out
}

func condTrue(u *unstructured.Unstructured, typ string) bool {
	c, ok := framework.Condition(u, typ)
	return ok && c["status"] == "True"
}

func TestExamplesBench(t *testing.T) {
	if os.Getenv("EX_BENCH_RUN") == "" {
		t.Skip("set EX_BENCH_RUN=1 (scripts/bench.sh does)")
	}
	s := framework.SharedServer(t)
	f := &figures{}
	count := n()
	ctx := context.Background()

	// PostgreSQL: create n Databases at once; each until Ready; delete.
	pg := postgres.ForTest(t)
	pgProvider := exampletest.SetupProvider(t, s, "postgres", framework.UniqueName("pgb-provider"))
	consumer := s.CreateWorkspaces(t, "root", framework.UniqueName("pgb"))[0]
	s.Bind(t, consumer, "postgres", pgProvider, postgresv1alpha1.GroupName, claims)
	exampletest.StartProvider(t, "postgres-provider", "./postgres/cmd/postgres-provider",
		"--kubeconfig", exampletest.ProviderKubeconfig(t, s, pgProvider, postgresv1alpha1.GroupName, "postgres-provider"),
		"--workspace", pgProvider.Path, "--dsn", pg.DSN(""))
	dbs := s.Dynamic(t, consumer.Path).Resource(postgresv1alpha1.GroupVersion.WithResource("databases")).Namespace("default")
	var names []string
	start := map[string]time.Time{}
	for i := range count {
		name := fmt.Sprintf("db%d", i)
		names = append(names, name)
		start[name] = time.Now()
		obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": postgresv1alpha1.GroupVersion.String(), "kind": "Database",
			"metadata": map[string]any{"name": name}, "spec": map[string]any{"owner": "app", "extensions": []any{"pgcrypto"}}}}
		if _, err := dbs.Create(ctx, obj, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	f.add(fmt.Sprintf("Database create → Ready (%d at once: database, role, pgcrypto, Secret)", count),
		waitAll(t, names, start, "Databases Ready", func(name string) bool {
			u, err := dbs.Get(ctx, name, metav1.GetOptions{})
			return err == nil && condTrue(u, postgresv1alpha1.ConditionReady)
		}))
	for _, name := range names {
		start[name] = time.Now()
		if err := dbs.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	f.add(fmt.Sprintf("Database delete → gone (%d at once: DROP DATABASE, DROP ROLE, Secret)", count),
		waitAll(t, names, start, "Databases gone", func(name string) bool {
			_, err := dbs.Get(ctx, name, metav1.GetOptions{})
			return err != nil
		}))

	// MongoDB: create n at once; downstream object; then the operator's
	// status until the consumer sees Ready.
	mdbProvider := exampletest.SetupProvider(t, s, "mongodb", framework.UniqueName("mdbb-provider"))
	downstream := s.CreateWorkspaces(t, "root", framework.UniqueName("mdbb-downstream"))[0]
	s.KubectlFor(downstream.Path).Run(t, "apply", "-f", exampletest.Example(t, "mongodb")+"/config/downstream")
	s.KubectlFor(downstream.Path).WaitForCRD(t, "mongodbcommunity.mongodbcommunity.mongodb.com", "mongodbcommunity", "mongodb-provider")
	mconsumer := s.CreateWorkspaces(t, "root", framework.UniqueName("mdbb"))[0]
	s.Bind(t, mconsumer, "mongodb", mdbProvider, mongodbv1alpha1.GroupName, claims)
	exampletest.StartProvider(t, "mongodb-provider", "./mongodb/cmd/mongodb-provider",
		"--kubeconfig", exampletest.ProviderKubeconfig(t, s, mdbProvider, mongodbv1alpha1.GroupName, "mongodb-provider"),
		"--workspace", mdbProvider.Path, "--downstream-kubeconfig", exampletest.AdminKubeconfig(t, s, downstream.Path))
	mdbs := s.Dynamic(t, mconsumer.Path).Resource(mongodbv1alpha1.GroupVersion.WithResource(mongodbv1alpha1.Resource)).Namespace("default")
	mdbc := s.Dynamic(t, downstream.Path).Resource(schema.GroupVersionResource{Group: controller.DownstreamGVK.Group, Version: "v1", Resource: "mongodbcommunity"}).Namespace("mongodb-provider")
	names = names[:0]
	for i := range count {
		name := fmt.Sprintf("m%d", i)
		names = append(names, name)
		start[name] = time.Now()
		obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": mongodbv1alpha1.GroupVersion.String(), "kind": "MongoDB",
			"metadata": map[string]any{"name": name}, "spec": map[string]any{"version": "7.0.12", "members": int64(1), "storageSize": "1Gi"}}}
		if _, err := mdbs.Create(ctx, obj, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	dsName := func(name string) string { return controller.DownstreamName(mconsumer.Cluster, "default", name) }
	f.add(fmt.Sprintf("MongoDB create → downstream object (%d at once)", count),
		waitAll(t, names, start, "downstream objects", func(name string) bool {
			_, err := mdbc.Get(ctx, dsName(name), metav1.GetOptions{})
			return err == nil
		}))
	for _, name := range names {
		start[name] = time.Now()
		patch := fmt.Sprintf(`{"status":{"phase":"Running","currentMongoDBMembers":1,"mongoUri":"mongodb://%s-svc:27017"}}`, dsName(name))
		if _, err := mdbc.Patch(ctx, dsName(name), types.MergePatchType, []byte(patch), metav1.PatchOptions{}, "status"); err != nil {
			t.Fatal(err)
		}
	}
	f.add(fmt.Sprintf("downstream status → consumer Ready with Secret (%d at once)", count),
		waitAll(t, names, start, "MongoDBs Ready", func(name string) bool {
			u, err := mdbs.Get(ctx, name, metav1.GetOptions{})
			return err == nil && condTrue(u, mongodbv1alpha1.ConditionReady)
		}))
	f.write(t)
}
