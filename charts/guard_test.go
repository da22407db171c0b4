package charts

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// TestLeastPrivilege: each platform Secret is mounted only by the
// components `make run` gives it to; above all, the shard admin's
// kubeconfig only reaches the other shards, the front proxy, the GraphQL
// gateway and the security-operator's API-change watch.
func TestLeastPrivilege(t *testing.T) {
	out, err := render(t, umbrellaDir(t), "--set", "global.shards=2", "--set", "examples.enabled=true", "--set", "examples.postgres.dsnSecret.name=pg")
	if err != nil {
		t.Fatal(err)
	}
	objs, err := decodeStrict(out)
	if err != nil {
		t.Fatal(err)
	}
	allowed := map[string][]string{
		"mp-core-pki":                           {"StatefulSet/mp-core", "StatefulSet/mp-core-b"},
		"mp-core-webhook-kubeconfig":            {"StatefulSet/mp-core", "StatefulSet/mp-core-b"},
		"mp-shard-admin-kubeconfig":             {"StatefulSet/mp-core-b", "Deployment/mp-front-proxy", "Deployment/mp-graphql-gateway", "Deployment/mp-security-operator"},
		"mp-front-proxy-shard-admin-kubeconfig": {"Deployment/mp-graphql-gateway", "Deployment/mp-security-operator"},
		"mp-admin-kubeconfig":                   {"Deployment/mp-bootstrap", "Deployment/mp-rebac-authz-webhook", "Deployment/mp-security-operator", "Pod/mp-test"},
		"mp-front-proxy-pki":                    {"StatefulSet/mp-core", "StatefulSet/mp-core-b", "Deployment/mp-front-proxy"},
		"mp-rebac-authz-webhook-tls":            {"Deployment/mp-rebac-authz-webhook"},
		"mp-openfga-key":                        {"Deployment/mp-openfga", "Deployment/mp-rebac-authz-webhook", "Deployment/mp-security-operator"},
		"mp-account-operator-credential":        {"Deployment/mp-account-operator"},
		"mp-security-operator-credential":       {"Deployment/mp-security-operator"},
		"mp-mongodb-provider-credential":        {"Deployment/mp-mongodb-provider"},
		"mp-postgres-provider-credential":       {"Deployment/mp-postgres-provider"},
		"mp-mongodb-downstream-kubeconfig":      {"Deployment/mp-mongodb-provider"},
		"pg":                                    {"Deployment/mp-postgres-provider"},
	}
	users := map[string][]string{}
	for name, spec := range podSpecs(objs) {
		for _, s := range secretsOf(spec) {
			if !slices.Contains(users[s], name) {
				users[s] = append(users[s], name)
			}
		}
	}
	for s, got := range users {
		want, ok := allowed[s]
		if !ok {
			t.Errorf("Secret %s is mounted by %v, and is in no allow-list", s, got)
			continue
		}
		for _, u := range got {
			if !slices.Contains(want, u) {
				t.Errorf("Secret %s is mounted by %s", s, u)
			}
		}
	}
	// The shard admin's kubeconfig must not reach the root shard's own
	// pod, the operators' credential pods, OpenFGA or the bootstrap.
	for _, u := range users["mp-shard-admin-kubeconfig"] {
		if u == "StatefulSet/mp-core" || u == "Deployment/mp-account-operator" || u == "Deployment/mp-bootstrap" {
			t.Errorf("shard admin kubeconfig mounted by %s", u)
		}
	}
	// A shard's pod holds its own serving key, not another shard's.
	for _, shard := range []string{"root", "b"} {
		name := map[string]string{"root": "StatefulSet/mp-core", "b": "StatefulSet/mp-core-b"}[shard]
		for _, v := range podSpecs(objs)[name].Volumes {
			if v.Secret == nil || v.Secret.SecretName != "mp-core-pki" {
				continue
			}
			if len(v.Secret.Items) == 0 {
				t.Errorf("%s mounts all of mp-core-pki", name)
			}
			for _, it := range v.Secret.Items {
				if strings.HasPrefix(it.Key, "serving-") && !strings.HasPrefix(it.Key, "serving-"+shard+".") {
					t.Errorf("%s holds %s", name, it.Key)
				}
			}
		}
	}
	// Only the bootstrap talks to the host cluster's API.
	for name, spec := range podSpecs(objs) {
		mounts := spec.AutomountServiceAccountToken == nil || *spec.AutomountServiceAccountToken
		if mounts != (name == "Deployment/mp-bootstrap") {
			t.Errorf("%s: automountServiceAccountToken %v", name, mounts)
		}
	}
}

// secretsOf names every Secret a pod mounts or reads into its environment.
func secretsOf(spec *corev1.PodSpec) []string {
	var out []string
	for _, v := range spec.Volumes {
		if v.Secret != nil {
			out = append(out, v.Secret.SecretName)
		}
	}
	for _, c := range append(append([]corev1.Container{}, spec.InitContainers...), spec.Containers...) {
		for _, e := range c.Env {
			if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
				out = append(out, e.ValueFrom.SecretKeyRef.Name)
			}
		}
	}
	return out
}

// TestWrongFlagsFail: the flag check catches what it is there for: an
// unknown flag and a bad value, for the core (cobra), a Go flag binary
// and OpenFGA (cobra) alike.
func TestWrongFlagsFail(t *testing.T) {
	chart := umbrellaDir(t)
	for _, tc := range []struct{ set, object string }{
		{"core.extraArgs={--secure-port=not-a-port}", "StatefulSet/mp-core"},
		{"core.extraArgs={--no-such-flag}", "StatefulSet/mp-core"},
		{"accountOperator.extraArgs={--workers=many}", "Deployment/mp-account-operator"},
		{"rebacAuthzWebhook.extraArgs={--no-such-flag=1}", "Deployment/mp-rebac-authz-webhook"},
		{"graphqlGateway.limits.maxDepth=-1,graphqlGateway.extraArgs={--max-depth=deep}", "Deployment/mp-graphql-gateway"},
		{"openfga.extraArgs={--max-types-per-authorization-model=lots}", "Deployment/mp-openfga"},
		{"openfga.extraArgs={--no-such-flag}", "Deployment/mp-openfga"},
		{"securityOperator.extraArgs={stray-positional}", "Deployment/mp-security-operator"},
	} {
		t.Run(tc.set, func(t *testing.T) {
			out, err := render(t, chart, "--set", tc.set)
			if err != nil {
				t.Fatal(err)
			}
			objs, err := decodeStrict(out)
			if err != nil {
				t.Fatal(err)
			}
			spec := podSpecs(objs)[tc.object]
			if spec == nil {
				t.Fatalf("%s not rendered", tc.object)
			}
			c := spec.Containers[0]
			if err := checkArgs(binaryPath(t, binaryOf(c.Image)), c); err == nil {
				t.Errorf("%s: the arguments %v passed the check", tc.object, c.Args)
			} else {
				t.Logf("caught: %v", firstLines(err.Error(), 1))
			}
		})
	}
}

// TestSchemaRefusesTypos: a value no chart knows fails rendering, in the
// umbrella chart and in every component's section.
func TestSchemaRefusesTypos(t *testing.T) {
	chart := umbrellaDir(t)
	for _, set := range []string{
		"globl.shards=2",
		"global.shard=2",
		"global.shards=0",
		"core.persistance.size=1Gi",
		"core.etcd.externl.enabled=true",
		"core.resources.limit.memory=1Gi",
		"openfga.datastore.engine=mysql",
		"openfga.cache.ttl=1s",
		"rebacAuthzWebhook.replica=3",
		"accountOperator.worker=3",
		"securityOperator.image.tags=1",
		"securityOperator.organizationStores=one",
		"graphqlGateway.limits.depth=3",
		"examples.enabled=true,examples.providers={mysql}",
		"examples.enabled=true,examples.postgres.dsnSecret.nam=pg",
		"bootstrap.tokenTtl=2h",
		"core.image.digest=latest",
	} {
		t.Run(set, func(t *testing.T) {
			if _, err := render(t, chart, "--set", set); err == nil {
				t.Errorf("--set %s rendered", set)
			} else if !strings.Contains(err.Error(), "schema") {
				t.Errorf("--set %s failed, but not by the schema: %v", set, err)
			}
		})
	}
}

// TestLint: `helm lint --strict` of every chart (the umbrella with its
// dependencies in place).
func TestLint(t *testing.T) {
	for _, c := range Components {
		t.Run(c, func(t *testing.T) {
			args := []string{"lint", "--strict", c}
			if c == "examples" {
				args = append(args, "--set", "postgres.dsnSecret.name=pg")
			}
			if out, err := runHelm(t, args...); err != nil {
				t.Errorf("%v\n%s", err, out)
			}
		})
	}
	t.Run(Umbrella, func(t *testing.T) {
		if out, err := runHelm(t, "lint", "--strict", umbrellaDir(t)); err != nil {
			t.Errorf("%v\n%s", err, out)
		}
	})
}

// TestREADMEListsEveryValue: each chart's README names every value of its
// values.yaml (a leaf's dotted path), and has a values.schema.json.
func TestREADMEListsEveryValue(t *testing.T) {
	for _, c := range append([]string{Umbrella}, Components...) {
		t.Run(c, func(t *testing.T) {
			if _, err := os.Stat(filepath.Join(c, "values.schema.json")); err != nil {
				t.Error(err)
			}
			readme, err := os.ReadFile(filepath.Join(c, "README.md"))
			if err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(filepath.Join(c, "values.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			var values map[string]any
			if err := yaml.Unmarshal(b, &values); err != nil {
				t.Fatal(err)
			}
			for _, p := range leaves("", values) {
				if !strings.Contains(string(readme), "`"+p+"`") {
					t.Errorf("README.md does not list `%s`", p)
				}
			}
		})
	}
}

// leaves are the dotted paths of a values tree's leaves (an empty map or
// list is a leaf).
func leaves(prefix string, v any) []string {
	m, ok := v.(map[string]any)
	if !ok || len(m) == 0 {
		return []string{prefix}
	}
	var out []string
	for k, sub := range m {
		p := k
		if prefix != "" {
			p = prefix + "." + k
		}
		out = append(out, leaves(p, sub)...)
	}
	sort.Strings(out)
	return out
}

// TestExampleManifestsInSync: the umbrella chart's copies of the example
// providers' manifests are the examples' own.
func TestExampleManifestsInSync(t *testing.T) {
	root := repoRoot(t)
	n := 0
	err := filepath.Walk(filepath.Join(Umbrella, "files", "examples"), func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(filepath.Join(Umbrella, "files", "examples"), p)
		want, err := os.ReadFile(filepath.Join(root, "examples", rel))
		if err != nil {
			return fmt.Errorf("%s has no original: %w", p, err)
		}
		got, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if string(got) != string(want) {
			return fmt.Errorf("%s differs from examples/%s: copy it again", p, rel)
		}
		n++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{"mongodb/config/kcp", "mongodb/config/downstream", "postgres/config/kcp"} {
		entries, err := os.ReadDir(filepath.Join(root, "examples", dir))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if _, err := os.Stat(filepath.Join(Umbrella, "files", "examples", dir, e.Name())); err != nil {
				t.Errorf("examples/%s/%s has no copy in the chart", dir, e.Name())
			}
		}
	}
	if n == 0 {
		t.Fatal("no example manifests in the chart")
	}
}

// TestAppVersion: every chart's appVersion is the repository's VERSION
// (the images' tag), when the repository has one.
func TestAppVersion(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "VERSION"))
	if os.IsNotExist(err) {
		t.Skip("no VERSION file")
	}
	if err != nil {
		t.Fatal(err)
	}
	version := strings.TrimSpace(string(b))
	for _, c := range append([]string{Umbrella}, Components...) {
		cb, err := os.ReadFile(filepath.Join(c, "Chart.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		var chart struct {
			AppVersion string `json:"appVersion"`
		}
		if err := yaml.Unmarshal(cb, &chart); err != nil {
			t.Fatal(err)
		}
		if chart.AppVersion != version {
			t.Errorf("%s: appVersion %q, VERSION %q", c, chart.AppVersion, version)
		}
	}
}
