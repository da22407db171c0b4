package workspaceauth

import (
	"context"
	"strings"
	"testing"
	"time"

	kcpinformers "github.com/kcp-dev/apimachinery/v2/third_party/informers"
	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/meshplane/meshplane/core/internal/authentication/jwt"
	"github.com/meshplane/meshplane/core/internal/clusters"
	"github.com/meshplane/meshplane/sdk/testing/oidcissuer"
)

func TestScope(t *testing.T) {
	u, err := scope(&user.DefaultInfo{Name: "corp:bob", UID: "1", Groups: []string{"admins", "system:masters"},
		Extra: map[string][]string{"example.com/team": {"a"}, "authentication.kcp.io/scopes": {"cluster:other"}}}, "c1")
	if err != nil {
		t.Fatal(err)
	}
	if u.GetName() != "corp:bob" || strings.Join(u.GetGroups(), ",") != "admins,system:authenticated" {
		t.Errorf("user %+v: want corp:bob in admins and system:authenticated only", u)
	}
	if e := u.GetExtra(); strings.Join(e[ScopesExtra], ",") != "cluster:c1" || strings.Join(e[ClusterNameExtra], ",") != "c1" ||
		strings.Join(e["example.com/team"], ",") != "a" {
		t.Errorf("extra %v: want the scope of c1 (the issuer's kcp.io extras dropped) and example.com/team kept", e)
	}
	if _, err := scope(&user.DefaultInfo{Name: "system:admin"}, "c1"); err == nil {
		t.Error("a system: username must be refused")
	}
}

// clusterMap is the tenancy index's answers for the test's clusters.
type clusterMap struct {
	lcs   map[string]*corev1alpha1.LogicalCluster
	paths map[string]string
}

func (c clusterMap) Get(name string) (*corev1alpha1.LogicalCluster, bool) {
	lc, ok := c.lcs[name]
	return lc, ok
}
func (c clusterMap) Resolve(p string) (string, bool) { n, ok := c.paths[p]; return n, ok }

func lc(name, typ string) *corev1alpha1.LogicalCluster {
	return &corev1alpha1.LogicalCluster{ObjectMeta: metav1.ObjectMeta{Name: "cluster",
		Annotations: map[string]string{clusters.Annotation: name, TypeAnnotation: typ}}}
}

func TestIndex(t *testing.T) {
	srv, err := oidcissuer.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	corp, err := srv.NewIssuer("corp", oidcissuer.ES256)
	if err != nil {
		t.Fatal(err)
	}
	types := kcpinformers.NewSharedIndexInformer(&cache.ListWatch{}, &tenancyv1alpha1.WorkspaceType{}, 0, cache.Indexers{})
	configs := kcpinformers.NewSharedIndexInformer(&cache.ListWatch{}, &tenancyv1alpha1.WorkspaceAuthenticationConfiguration{}, 0, cache.Indexers{})
	wt := &tenancyv1alpha1.WorkspaceType{ObjectMeta: metav1.ObjectMeta{Name: "team", ResourceVersion: "1",
		Annotations: map[string]string{clusters.Annotation: "org"}},
		Spec: tenancyv1alpha1.WorkspaceTypeSpec{AuthenticationConfigurations: []tenancyv1alpha1.AuthenticationConfigurationReference{{Name: "corp"}}}}
	if err := types.GetStore().Add(wt); err != nil {
		t.Fatal(err)
	}
	cm := clusterMap{
		lcs:   map[string]*corev1alpha1.LogicalCluster{"ws1": lc("ws1", "root:org:team"), "ws2": lc("ws2", "root:org:other")},
		paths: map[string]string{"root:org": "org"},
	}
	i := New(cm, FromIndexer(types.GetIndexer()), jwt.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := i.Start(ctx, configs); err != nil {
		t.Fatal(err)
	}
	wac := &tenancyv1alpha1.WorkspaceAuthenticationConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "corp", ResourceVersion: "1",
		Annotations: map[string]string{clusters.Annotation: "org"}},
		Spec: tenancyv1alpha1.WorkspaceAuthenticationConfigurationSpec{JWT: []tenancyv1alpha1.JWTAuthenticator{{
			Issuer: tenancyv1alpha1.Issuer{URL: corp.URL, Audiences: []string{"corp-app"}, CertificateAuthority: srv.CAPEM()},
			ClaimMappings: tenancyv1alpha1.ClaimMappings{
				Username: tenancyv1alpha1.PrefixedClaimOrExpression{Claim: "email", Prefix: ptr.To("corp:")},
				Groups:   tenancyv1alpha1.PrefixedClaimOrExpression{Claim: "groups", Prefix: ptr.To("")},
			}}}}}
	i.set(wac, false)

	token := corp.Token(oidcissuer.Claims{"email": "bob@corp", "aud": "corp-app", "groups": []string{"admins"}}, time.Hour)
	in := func(c string) context.Context { return clusters.WithCluster(context.Background(), c) }
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, ok, err := i.AuthenticateToken(in("ws1"), token)
		if ok && err == nil {
			if resp.User.GetName() != "corp:bob@corp" {
				t.Fatalf("user %+v, want corp:bob@corp", resp.User)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("ws1 (type root:org:team): not authenticated: ok=%v err=%v", ok, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, c := range []string{"ws2", "org", "unknown"} {
		if _, ok, err := i.AuthenticateToken(in(c), token); ok || err != nil {
			t.Errorf("cluster %s: want not authenticated and no error, got ok=%v err=%v", c, ok, err)
		}
	}
	// The type stops referencing the configuration: its tokens stop too.
	wt2 := wt.DeepCopy()
	wt2.ResourceVersion, wt2.Spec.AuthenticationConfigurations = "2", nil
	if err := types.GetStore().Update(wt2); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := i.AuthenticateToken(in("ws1"), token); ok {
		t.Error("after the type dropped its configuration: want not authenticated")
	}
	// Back again, then the configuration is deleted.
	if err := types.GetStore().Update(wt); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := i.AuthenticateToken(in("ws1"), token); !ok {
		t.Error("type references the configuration again: want authenticated")
	}
	i.set(wac, true)
	if _, ok, _ := i.AuthenticateToken(in("ws1"), token); ok {
		t.Error("after the configuration was deleted: want not authenticated")
	}
}
