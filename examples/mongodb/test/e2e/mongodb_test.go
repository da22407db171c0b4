package e2e

import (
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/meshplane/meshplane/examples/internal/exampletest"
	mongodbv1alpha1 "github.com/meshplane/meshplane/examples/mongodb/api/v1alpha1"
	"github.com/meshplane/meshplane/examples/mongodb/controller"
	"github.com/meshplane/meshplane/sdk/testing/framework"
)

const (
	export = mongodbv1alpha1.GroupName
	dsNS   = "mongodb-provider"
)

var (
	mongodbGVR = mongodbv1alpha1.GroupVersion.WithResource(mongodbv1alpha1.Resource)
	mdbcGVR    = schema.GroupVersionResource{Group: controller.DownstreamGVK.Group, Version: "v1", Resource: "mongodbcommunity"}
	secretGVR  = corev1.SchemeGroupVersion.WithResource("secrets")
)

func claims(state string) []any {
	return []any{map[string]any{"group": "", "resource": "secrets", "verbs": []any{"get", "create", "update", "delete"},
		"selector": map[string]any{"matchAll": true}, "state": state}}
}

// env is one provider with its downstream workspace.
type env struct {
	s          *framework.Server
	provider   framework.Workspace
	downstream framework.Workspace
	proc       *exampletest.Provider
	kubeconfig string // the provider's scoped credential
}

func (e *env) ds(t *testing.T) dynamic.ResourceInterface {
	return e.s.Dynamic(t, e.downstream.Path).Resource(mdbcGVR).Namespace(dsNS)
}

// downstreamOf lists the downstream objects of a consumer's MongoDB.
func (e *env) downstreamOf(t *testing.T, consumer framework.Workspace, name string) []unstructured.Unstructured {
	l, err := e.ds(t).List(framework.CallContext(t), metav1.ListOptions{
		LabelSelector: controller.LabelCluster + "=" + consumer.Cluster + "," + controller.LabelName + "=" + name})
	if err != nil {
		t.Fatal(err)
	}
	return l.Items
}

func (e *env) waitDownstream(t *testing.T, consumer framework.Workspace, name string) *unstructured.Unstructured {
	t.Helper()
	var got *unstructured.Unstructured
	framework.Eventually(t, 90*time.Second, 250*time.Millisecond, "the downstream MongoDBCommunity of "+consumer.Path+" "+name, func() (bool, string) {
		items := e.downstreamOf(t, consumer, name)
		if len(items) != 1 {
			return false, fmt.Sprintf("%d objects", len(items))
		}
		got = &items[0]
		return true, ""
	})
	return got
}

// operatorReports plays the MongoDB operator: it sets the downstream status.
func (e *env) operatorReports(t *testing.T, obj *unstructured.Unstructured, phase string, members int64) {
	t.Helper()
	patch := fmt.Sprintf(`{"status":{"phase":%q,"currentMongoDBMembers":%d,"mongoUri":"mongodb://%s-svc.%s.svc.cluster.local:27017"}}`,
		phase, members, obj.GetName(), dsNS)
	e.s.KubectlFor(e.downstream.Path).Run(t, "-n", dsNS, "patch", "mongodbcommunity", obj.GetName(), "--subresource=status", "--type=merge", "-p", patch)
}

func mongoDB(name, ns string, members int) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": mongodbv1alpha1.GroupVersion.String(), "kind": "MongoDB",
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec":     map[string]any{"version": "7.0.12", "members": int64(members), "storageSize": "5Gi"},
	}}
}

func createNamespace(t *testing.T, s *framework.Server, ws framework.Workspace, ns string) {
	t.Helper()
	s.KubectlFor(ws.Path).Run(t, "create", "namespace", ns)
}

func waitMongoDB(t *testing.T, s *framework.Server, ws framework.Workspace, ns, name, what string, cond func(*unstructured.Unstructured) bool) *unstructured.Unstructured {
	t.Helper()
	var got *unstructured.Unstructured
	framework.Eventually(t, 90*time.Second, 250*time.Millisecond, what, func() (bool, string) {
		var err error
		got, err = s.Dynamic(t, ws.Path).Resource(mongodbGVR).Namespace(ns).Get(framework.CallContext(t), name, metav1.GetOptions{})
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

func setup(t *testing.T) (*env, framework.Workspace) {
	s := framework.SharedServer(t)
	e := &env{s: s}
	e.provider = exampletest.SetupProvider(t, s, "mongodb", framework.UniqueName("mdb-provider"))
	e.downstream = s.CreateWorkspaces(t, "root", framework.UniqueName("mdb-downstream"))[0]
	s.KubectlFor(e.downstream.Path).Run(t, "apply", "-f", exampletest.Example(t, "mongodb")+"/config/downstream")
	s.KubectlFor(e.downstream.Path).WaitForCRD(t, "mongodbcommunity.mongodbcommunity.mongodb.com", "mongodbcommunity", dsNS)

	// A first consumer, accepting the claim, gives the slice its URL.
	a := s.CreateWorkspaces(t, "root", framework.UniqueName("mdb-a"))[0]
	s.Bind(t, a, "mongodb", e.provider, export, claims("Accepted"))
	e.kubeconfig = exampletest.ProviderKubeconfig(t, s, e.provider, export, "mongodb-provider")
	e.proc = exampletest.StartProvider(t, "mongodb-provider", "./mongodb/cmd/mongodb-provider",
		"--kubeconfig", e.kubeconfig, "--workspace", e.provider.Path,
		"--downstream-kubeconfig", exampletest.AdminKubeconfig(t, s, e.downstream.Path), "--downstream-namespace", dsNS)
	return e, a
}

// TestMongoDBProvider: status flows back, the Secret goes where the claim
// is accepted only, spec changes are synced, and deletion cleans up
// downstream also when the provider was stopped.
func TestMongoDBProvider(t *testing.T) {
	e, a := setup(t)
	s := e.s
	createNamespace(t, s, a, "shop")
	if _, err := s.Dynamic(t, a.Path).Resource(mongodbGVR).Namespace("shop").Create(framework.CallContext(t), mongoDB("orders", "shop", 3), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// Synced: a labelled downstream object mirrors the spec.
	ds := e.waitDownstream(t, a, "orders")
	if got := ds.GetLabels(); got[controller.LabelNamespace] != "shop" || got[controller.LabelCluster] != a.Cluster {
		t.Errorf("downstream labels %v do not name %s shop/orders", got, a.Cluster)
	}
	if ds.GetName() != controller.DownstreamName(a.Cluster, "shop", "orders") {
		t.Errorf("downstream name %s", ds.GetName())
	}
	members, _, _ := unstructured.NestedInt64(ds.Object, "spec", "members")
	version, _, _ := unstructured.NestedString(ds.Object, "spec", "version")
	vcts, _, _ := unstructured.NestedSlice(ds.Object, "spec", "statefulSet", "spec", "volumeClaimTemplates")
	if members != 3 || version != "7.0.12" || !strings.Contains(framework.Compact(vcts), `"storage":"5Gi"`) {
		t.Errorf("downstream spec does not mirror the MongoDB: %s", framework.Compact(ds.Object["spec"]))
	}
	got := waitMongoDB(t, s, a, "shop", "orders", "orders Synced and Creating", func(u *unstructured.Unstructured) bool {
		phase, _, _ := unstructured.NestedString(u.Object, "status", "phase")
		return conditionIs(mongodbv1alpha1.ConditionSynced, "True", "")(u) && phase == mongodbv1alpha1.PhaseCreating
	})
	if !slices.Contains(got.GetFinalizers(), controller.Finalizer) {
		t.Errorf("no finalizer on the MongoDB: %v", got.GetFinalizers())
	}

	// The operator reports the replica set running: Ready, connection
	// details, and the Secret with the downstream password.
	e.operatorReports(t, ds, "Running", 3)
	got = waitMongoDB(t, s, a, "shop", "orders", "orders Ready", conditionIs(mongodbv1alpha1.ConditionReady, "True", ""))
	host, _, _ := unstructured.NestedString(got.Object, "status", "connection", "host")
	if want := ds.GetName() + "-svc." + dsNS + ".svc.cluster.local"; host != want {
		t.Errorf("status.connection.host = %q, want %q", host, want)
	}
	sec, err := kubernetes.NewForConfigOrDie(s.RESTConfig(t, a.Path)).CoreV1().Secrets("shop").Get(framework.CallContext(t), "orders-connection", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the connection Secret: %v", err)
	}
	pwSecret, err := s.Dynamic(t, e.downstream.Path).Resource(secretGVR).Namespace(dsNS).Get(framework.CallContext(t), ds.GetName()+"-password", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pwB64, _, _ := unstructured.NestedString(pwSecret.Object, "data", "password")
	pw, _ := base64.StdEncoding.DecodeString(pwB64)
	if len(pw) == 0 || string(sec.Data["password"]) != string(pw) || !strings.Contains(string(sec.Data["uri"]), "app:"+string(pw)+"@"+host+":27017") {
		t.Errorf("the connection Secret does not carry the downstream password: %v", sec.Data)
	}

	// A spec change is synced down; the status follows the operator.
	s.KubectlFor(a.Path).Run(t, "-n", "shop", "patch", "mongodb", "orders", "--type=merge", "-p", `{"spec":{"members":5}}`)
	framework.Eventually(t, 60*time.Second, 250*time.Millisecond, "members 5 downstream", func() (bool, string) {
		items := e.downstreamOf(t, a, "orders")
		if len(items) != 1 {
			return false, fmt.Sprint(len(items))
		}
		m, _, _ := unstructured.NestedInt64(items[0].Object, "spec", "members")
		return m == 5, fmt.Sprint(m)
	})
	// A change made downstream behind the provider's back is reverted.
	e.s.KubectlFor(e.downstream.Path).Run(t, "-n", dsNS, "patch", "mongodbcommunity", ds.GetName(), "--type=merge", "-p", `{"spec":{"members":9}}`)
	framework.Eventually(t, 60*time.Second, 250*time.Millisecond, "the downstream drift reverted to members 5", func() (bool, string) {
		got, err := e.ds(t).Get(framework.CallContext(t), ds.GetName(), metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		m, _, _ := unstructured.NestedInt64(got.Object, "spec", "members")
		return m == 5, fmt.Sprint(m)
	})
	waitMongoDB(t, s, a, "shop", "orders", "orders Creating again (3 of 5 members)", func(u *unstructured.Unstructured) bool {
		phase, _, _ := unstructured.NestedString(u.Object, "status", "phase")
		return phase == mongodbv1alpha1.PhaseCreating
	})

	t.Run("rejected claim", func(t *testing.T) {
		b := s.CreateWorkspaces(t, "root", framework.UniqueName("mdb-b"))[0]
		s.Bind(t, b, "mongodb", e.provider, export, claims("Rejected"))
		createNamespace(t, s, b, "shop")
		// b's own Secret of the name the provider would write.
		s.KubectlFor(b.Path).Run(t, "-n", "shop", "create", "secret", "generic", "orders-connection", "--from-literal=mine=yes")
		if _, err := s.Dynamic(t, b.Path).Resource(mongodbGVR).Namespace("shop").Create(framework.CallContext(t), mongoDB("orders", "shop", 1), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		e.operatorReports(t, e.waitDownstream(t, b, "orders"), "Running", 1)
		got := waitMongoDB(t, s, b, "shop", "orders", "b's orders: ClaimNotAccepted", conditionIs(mongodbv1alpha1.ConditionConnectionSecret, "False", "ClaimNotAccepted"))
		if phase, _, _ := unstructured.NestedString(got.Object, "status", "phase"); phase != mongodbv1alpha1.PhaseReady {
			t.Errorf("phase %q: the status flows back also without the claim", phase)
		}
		if c, _ := framework.Condition(got, mongodbv1alpha1.ConditionReady); c["status"] != "False" {
			t.Errorf("Ready without the Secret: %v", c)
		}
		sec, err := kubernetes.NewForConfigOrDie(s.RESTConfig(t, b.Path)).CoreV1().Secrets("shop").Get(framework.CallContext(t), "orders-connection", metav1.GetOptions{})
		if err != nil || string(sec.Data["mine"]) != "yes" || len(sec.Data) != 1 || len(sec.Labels) != 0 {
			t.Errorf("b's own Secret was touched: %v %v", sec, err)
		}
		// The provider's credential reaches secrets in a but not in b.
		vw := strings.TrimSpace((&framework.Kubectl{Kubeconfig: e.kubeconfig}).Run(t, "config", "view", "--minify", "-o", "jsonpath={.clusters[0].cluster.server}"))
		k := &framework.Kubectl{Kubeconfig: e.kubeconfig}
		if out := k.Run(t, "--server", vw+"/clusters/"+a.Cluster, "-n", "shop", "get", "secret", "orders-connection", "-o", "name"); !strings.Contains(out, "orders-connection") {
			t.Errorf("the provider cannot read a's Secret: %q", out)
		}
		if out, errOut, err := k.RunErr(t, "--server", vw+"/clusters/"+b.Cluster, "-n", "shop", "get", "secret", "orders-connection"); err == nil {
			t.Errorf("the provider read a Secret where the claim was rejected: %s", out)
		} else {
			t.Logf("secrets in b through the virtual workspace: %s", strings.TrimSpace(errOut))
		}
		if out, _, err := k.RunErr(t, "--server", vw+"/clusters/"+b.Cluster, "-n", "shop", "delete", "secret", "orders-connection"); err == nil {
			t.Errorf("the provider deleted a Secret where the claim was rejected: %s", out)
		}
	})

	t.Run("foreign Secret of the name", func(t *testing.T) {
		s.KubectlFor(a.Path).Run(t, "-n", "shop", "create", "secret", "generic", "logs-connection", "--from-literal=mine=yes")
		if _, err := s.Dynamic(t, a.Path).Resource(mongodbGVR).Namespace("shop").Create(framework.CallContext(t), mongoDB("logs", "shop", 1), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		e.operatorReports(t, e.waitDownstream(t, a, "logs"), "Running", 1)
		waitMongoDB(t, s, a, "shop", "logs", "logs: SecretExists", conditionIs(mongodbv1alpha1.ConditionConnectionSecret, "False", "SecretExists"))
		sec, err := kubernetes.NewForConfigOrDie(s.RESTConfig(t, a.Path)).CoreV1().Secrets("shop").Get(framework.CallContext(t), "logs-connection", metav1.GetOptions{})
		if err != nil || len(sec.Data) != 1 || string(sec.Data["mine"]) != "yes" {
			t.Errorf("the consumer's own Secret was overwritten: %v %v", sec.Data, err)
		}
		s.KubectlFor(a.Path).Run(t, "-n", "shop", "delete", "mongodb", "logs", "--timeout=60s")
		if _, err := kubernetes.NewForConfigOrDie(s.RESTConfig(t, a.Path)).CoreV1().Secrets("shop").Get(framework.CallContext(t), "logs-connection", metav1.GetOptions{}); err != nil {
			t.Errorf("deleting the MongoDB deleted the consumer's own Secret: %v", err)
		}
	})

	t.Run("delete while the provider is stopped", func(t *testing.T) {
		name := ds.GetName()
		e.proc.Stop(t)
		s.KubectlFor(a.Path).Run(t, "-n", "shop", "delete", "mongodb", "orders", "--wait=false")
		got, err := s.Dynamic(t, a.Path).Resource(mongodbGVR).Namespace("shop").Get(framework.CallContext(t), "orders", metav1.GetOptions{})
		if err != nil || got.GetDeletionTimestamp() == nil {
			t.Fatalf("the finalizer does not hold the MongoDB while the provider is down: %v %v", got, err)
		}
		if len(e.downstreamOf(t, a, "orders")) != 1 {
			t.Fatal("the downstream object went without the provider")
		}
		e.proc.Start(t)
		framework.Eventually(t, 90*time.Second, 250*time.Millisecond, "orders gone in a", func() (bool, string) {
			_, err := s.Dynamic(t, a.Path).Resource(mongodbGVR).Namespace("shop").Get(framework.CallContext(t), "orders", metav1.GetOptions{})
			return err != nil && strings.Contains(err.Error(), "not found"), fmt.Sprint(err)
		})
		if n := len(e.downstreamOf(t, a, "orders")); n != 0 {
			t.Errorf("%d downstream objects left", n)
		}
		if _, err := s.Dynamic(t, e.downstream.Path).Resource(secretGVR).Namespace(dsNS).Get(framework.CallContext(t), name+"-password", metav1.GetOptions{}); err == nil {
			t.Error("the downstream password Secret is left")
		}
		framework.Eventually(t, 30*time.Second, 250*time.Millisecond, "the connection Secret gone", func() (bool, string) {
			_, err := kubernetes.NewForConfigOrDie(s.RESTConfig(t, a.Path)).CoreV1().Secrets("shop").Get(framework.CallContext(t), "orders-connection", metav1.GetOptions{})
			return err != nil, fmt.Sprint(err)
		})
	})
}

// TestBindUnbindWhileRunning: a workspace that binds while the provider
// runs is engaged and served; when it unbinds, its MongoDBs are cleaned up
// downstream and it is disengaged.
func TestBindUnbindWhileRunning(t *testing.T) {
	e, a := setup(t)
	s := e.s
	framework.Eventually(t, 60*time.Second, 250*time.Millisecond, "a engaged", func() (bool, string) {
		got := e.proc.Engaged(t)
		return slices.Contains(got, a.Cluster), fmt.Sprint(got)
	})
	c := s.CreateWorkspaces(t, "root", framework.UniqueName("mdb-c"))[0]
	if got := e.proc.Engaged(t); slices.Contains(got, c.Cluster) {
		t.Fatalf("c engaged before binding: %v", got)
	}
	s.Bind(t, c, "mongodb", e.provider, export, claims("Accepted"))
	framework.Eventually(t, 60*time.Second, 250*time.Millisecond, "c engaged", func() (bool, string) {
		got := e.proc.Engaged(t)
		return slices.Contains(got, c.Cluster), fmt.Sprint(got)
	})
	if _, err := s.Dynamic(t, c.Path).Resource(mongodbGVR).Namespace("default").Create(framework.CallContext(t), mongoDB("cache", "default", 1), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.operatorReports(t, e.waitDownstream(t, c, "cache"), "Running", 1)
	waitMongoDB(t, s, c, "default", "cache", "c's cache Ready", conditionIs(mongodbv1alpha1.ConditionReady, "True", ""))

	s.KubectlFor(c.Path).Run(t, "delete", "apibinding", "mongodb", "--wait=false")
	framework.Eventually(t, 90*time.Second, 250*time.Millisecond, "c disengaged", func() (bool, string) {
		got := e.proc.Engaged(t)
		return !slices.Contains(got, c.Cluster), fmt.Sprint(got)
	})
	framework.Eventually(t, 30*time.Second, 250*time.Millisecond, "c's downstream object gone", func() (bool, string) {
		n := len(e.downstreamOf(t, c, "cache"))
		return n == 0, fmt.Sprint(n)
	})
	if got := e.proc.Engaged(t); !slices.Contains(got, a.Cluster) {
		t.Errorf("a disengaged with c: %v", got)
	}
}
