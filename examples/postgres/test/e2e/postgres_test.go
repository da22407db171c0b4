package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"

	"github.com/meshplane/meshplane/examples/internal/exampletest"
	postgresv1alpha1 "github.com/meshplane/meshplane/examples/postgres/api/v1alpha1"
	"github.com/meshplane/meshplane/examples/postgres/controller"
	"github.com/meshplane/meshplane/sdk/testing/framework"
	"github.com/meshplane/meshplane/sdk/testing/postgres"
)

const export = postgresv1alpha1.GroupName

var databaseGVR = postgresv1alpha1.GroupVersion.WithResource(postgresv1alpha1.Resource)

func claims(state string) []any {
	return []any{map[string]any{"group": "", "resource": "secrets", "verbs": []any{"get", "create", "update", "delete"},
		"selector": map[string]any{"matchAll": true}, "state": state}}
}

func database(name, owner string, extensions ...string) *unstructured.Unstructured {
	spec := map[string]any{"owner": owner}
	if len(extensions) > 0 {
		ext := make([]any, len(extensions))
		for i, e := range extensions {
			ext[i] = e
		}
		spec["extensions"] = ext
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": postgresv1alpha1.GroupVersion.String(), "kind": "Database",
		"metadata": map[string]any{"name": name, "namespace": "default"},
		"spec":     spec,
	}}
}

func createDatabase(t *testing.T, s *framework.Server, ws framework.Workspace, obj *unstructured.Unstructured) {
	t.Helper()
	if _, err := s.Dynamic(t, ws.Path).Resource(databaseGVR).Namespace("default").Create(framework.CallContext(t), obj, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating Database %s in %s: %v", obj.GetName(), ws.Path, err)
	}
}

func waitDatabase(t *testing.T, s *framework.Server, ws framework.Workspace, name, what string, cond func(*unstructured.Unstructured) bool) *unstructured.Unstructured {
	t.Helper()
	var got *unstructured.Unstructured
	framework.Eventually(t, 90*time.Second, 250*time.Millisecond, what, func() (bool, string) {
		var err error
		got, err = s.Dynamic(t, ws.Path).Resource(databaseGVR).Namespace("default").Get(framework.CallContext(t), name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return cond(got), framework.Compact(got.Object["status"])
	})
	return got
}

func conditionIs(typ, status, reason string) func(*unstructured.Unstructured) bool {
	return func(u *unstructured.Unstructured) bool {
		c, ok := framework.Condition(u, typ)
		return ok && c["status"] == status && (reason == "" || c["reason"] == reason)
	}
}

func credentials(t *testing.T, s *framework.Server, ws framework.Workspace, name string) *corev1.Secret {
	t.Helper()
	sec, err := kubernetes.NewForConfigOrDie(s.RESTConfig(t, ws.Path)).CoreV1().Secrets("default").Get(framework.CallContext(t), name+"-credentials", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the credentials Secret in %s: %v", ws.Path, err)
	}
	return sec
}

func connect(t *testing.T, dsn string) *pgx.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("connecting with %s: %v", redact(dsn), err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func redact(dsn string) string {
	if i, j := strings.Index(dsn, "://"), strings.LastIndex(dsn, "@"); i >= 0 && j > i {
		if k := strings.Index(dsn[i+3:j], ":"); k >= 0 {
			return dsn[:i+3+k+1] + "***" + dsn[j:]
		}
	}
	return dsn
}

func exists(t *testing.T, pg *postgres.Server, query, name string) bool {
	t.Helper()
	var ok bool
	if err := connect(t, pg.DSN("")).QueryRow(context.Background(), query, name).Scan(&ok); err != nil {
		t.Fatal(err)
	}
	return ok
}

const (
	dbExists   = "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)"
	roleExists = "SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = $1)"
)

// TestPostgresProvider: two workspaces' same-named Databases become two
// real databases; each team works in its own with the delivered
// credentials and cannot log in to the other's; a rejected claim gets no
// credentials; an unknown extension fails; deletion drops database and
// role.
func TestPostgresProvider(t *testing.T) {
	s := framework.SharedServer(t)
	pg := server(t)
	provider := exampletest.SetupProvider(t, s, "postgres", framework.UniqueName("pg-provider"))
	consumers := s.CreateWorkspaces(t, "root", framework.UniqueName("pg-a"), framework.UniqueName("pg-b"), framework.UniqueName("pg-c"))
	a, b, c := consumers[0], consumers[1], consumers[2]
	s.Bind(t, a, "postgres", provider, export, claims("Accepted"))
	s.Bind(t, b, "postgres", provider, export, claims("Accepted"))
	s.Bind(t, c, "postgres", provider, export, claims("Rejected"))
	kc := exampletest.ProviderKubeconfig(t, s, provider, export, "postgres-provider")
	exampletest.StartProvider(t, "postgres-provider", "./postgres/cmd/postgres-provider",
		"--kubeconfig", kc, "--workspace", provider.Path, "--dsn", pg.DSN(""))

	for _, ws := range []framework.Workspace{a, b} {
		createDatabase(t, s, ws, database("app", "shop", "pgcrypto"))
	}
	got := map[string]*unstructured.Unstructured{}
	sec := map[string]*corev1.Secret{}
	for _, ws := range []framework.Workspace{a, b} {
		got[ws.Cluster] = waitDatabase(t, s, ws, "app", "app Ready in "+ws.Path, conditionIs(postgresv1alpha1.ConditionReady, "True", ""))
		sec[ws.Cluster] = credentials(t, s, ws, "app")
	}
	dbName := func(ws framework.Workspace) string {
		n, _, _ := unstructured.NestedString(got[ws.Cluster].Object, "status", "databaseName")
		return n
	}
	wantA, roleA := controller.Names(a.Cluster, "default", "app", "shop")
	if dbName(a) != wantA || dbName(a) == dbName(b) || !strings.HasPrefix(dbName(b), b.Cluster) {
		t.Fatalf("database names: a %q (want %q), b %q", dbName(a), wantA, dbName(b))
	}
	if !slices.Contains(got[a.Cluster].GetFinalizers(), controller.Finalizer) {
		t.Errorf("no finalizer: %v", got[a.Cluster].GetFinalizers())
	}
	if string(sec[a.Cluster].Data["username"]) != roleA || string(sec[a.Cluster].Data["database"]) != wantA {
		t.Errorf("a's Secret names %s/%s", sec[a.Cluster].Data["username"], sec[a.Cluster].Data["database"])
	}

	// Each team works in its own database, with pgcrypto.
	ctx := context.Background()
	for _, ws := range []framework.Workspace{a, b} {
		conn := connect(t, string(sec[ws.Cluster].Data["uri"]))
		if _, err := conn.Exec(ctx, "CREATE TABLE orders (id serial PRIMARY KEY, item text NOT NULL)"); err != nil {
			t.Fatalf("%s: %v", ws.Path, err)
		}
		if _, err := conn.Exec(ctx, "INSERT INTO orders (item) VALUES ($1)", "item of "+ws.Cluster); err != nil {
			t.Fatal(err)
		}
		var item, digest, db, user string
		if err := conn.QueryRow(ctx, "SELECT item, encode(digest(item, 'sha256'), 'hex'), current_database(), current_user FROM orders").Scan(&item, &digest, &db, &user); err != nil {
			t.Fatalf("%s: %v", ws.Path, err)
		}
		if item != "item of "+ws.Cluster || len(digest) != 64 || db != dbName(ws) {
			t.Errorf("%s: item %q digest %q database %q", ws.Path, item, digest, db)
		}
		var super bool
		if err := conn.QueryRow(ctx, "SELECT rolsuper OR rolcreatedb OR rolcreaterole FROM pg_roles WHERE rolname = current_user").Scan(&super); err != nil || super {
			t.Errorf("%s: the consumer's role has extra rights: %v %v", ws.Path, super, err)
		}
	}
	// Neither can log in to the other's database.
	for _, pair := range [][2]framework.Workspace{{a, b}, {b, a}} {
		from, to := pair[0], pair[1]
		uri := strings.Replace(string(sec[from.Cluster].Data["uri"]), "/"+dbName(from)+"?", "/"+dbName(to)+"?", 1)
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		conn, err := pgx.Connect(cctx, uri)
		cancel()
		if err == nil {
			conn.Close(ctx)
			t.Errorf("%s's role logged in to %s's database", from.Path, to.Path)
		} else if !strings.Contains(err.Error(), "permission denied for database") {
			t.Errorf("%s into %s's database: %v, want permission denied", from.Path, to.Path, err)
		}
	}

	t.Run("rejected claim", func(t *testing.T) {
		createDatabase(t, s, c, database("app", "shop"))
		got := waitDatabase(t, s, c, "app", "c's app: ClaimNotAccepted", conditionIs(postgresv1alpha1.ConditionCredentials, "False", "ClaimNotAccepted"))
		if phase, _, _ := unstructured.NestedString(got.Object, "status", "phase"); phase != postgresv1alpha1.PhaseFailed {
			t.Errorf("phase %q, want Failed", phase)
		}
		if _, err := kubernetes.NewForConfigOrDie(s.RESTConfig(t, c.Path)).CoreV1().Secrets("default").Get(framework.CallContext(t), "app-credentials", metav1.GetOptions{}); err == nil {
			t.Error("a credentials Secret appeared where the claim was rejected")
		}
	})

	t.Run("unknown extension", func(t *testing.T) {
		createDatabase(t, s, a, database("odd", "shop", "no_such_extension"))
		got := waitDatabase(t, s, a, "odd", "odd: UnknownExtension", conditionIs(postgresv1alpha1.ConditionExtensions, "False", "UnknownExtension"))
		if phase, _, _ := unstructured.NestedString(got.Object, "status", "phase"); phase != postgresv1alpha1.PhaseFailed {
			t.Errorf("phase %q, want Failed", phase)
		}
	})

	t.Run("invalid owner", func(t *testing.T) {
		_, err := s.Dynamic(t, a.Path).Resource(databaseGVR).Namespace("default").Create(framework.CallContext(t), database("bad", "Robert'); DROP TABLE x;--"), metav1.CreateOptions{})
		if err == nil || !strings.Contains(err.Error(), "spec.owner") {
			t.Errorf("an invalid owner must be refused with a message on spec.owner: %v", err)
		}
	})

	t.Run("delete", func(t *testing.T) {
		if err := s.Dynamic(t, a.Path).Resource(databaseGVR).Namespace("default").Delete(framework.CallContext(t), "app", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		framework.Eventually(t, 60*time.Second, 250*time.Millisecond, "a's app gone", func() (bool, string) {
			_, err := s.Dynamic(t, a.Path).Resource(databaseGVR).Namespace("default").Get(framework.CallContext(t), "app", metav1.GetOptions{})
			return err != nil, fmt.Sprint(err)
		})
		if exists(t, pg, dbExists, wantA) || exists(t, pg, roleExists, roleA) {
			t.Errorf("database %s or role %s left after the deletion", wantA, roleA)
		}
		if !exists(t, pg, dbExists, dbName(b)) {
			t.Errorf("b's database %s went with a's", dbName(b))
		}
		if _, err := kubernetes.NewForConfigOrDie(s.RESTConfig(t, a.Path)).CoreV1().Secrets("default").Get(framework.CallContext(t), "app-credentials", metav1.GetOptions{}); err == nil {
			t.Error("a's credentials Secret is left")
		}
	})
}
