package serviceaccount

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

type contextKey struct{}

// fakeLookup holds objects by cluster|namespace/name.
type fakeLookup struct {
	sas     map[string]*corev1.ServiceAccount
	secrets map[string]*corev1.Secret
}

func (f *fakeLookup) ServiceAccount(_ context.Context, cluster, namespace, name string) (*corev1.ServiceAccount, error) {
	return f.sas[cluster+"|"+namespace+"/"+name], nil
}

func (f *fakeLookup) Secret(_ context.Context, cluster, namespace, name string) (*corev1.Secret, error) {
	return f.secrets[cluster+"|"+namespace+"/"+name], nil
}

func testKeys(t testing.TB) *Keys {
	t.Helper()
	path := filepath.Join(t.TempDir(), SigningKeyFile)
	if err := EnsureSigningKey(path); err != nil {
		t.Fatal(err)
	}
	keys, err := LoadKeys(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

const testIssuer = "https://meshplane.test"

func newTest(t testing.TB) (*Issuer, *Authenticator, *fakeLookup) {
	keys := testKeys(t)
	l := &fakeLookup{sas: map[string]*corev1.ServiceAccount{
		"a|ns/robot": {ObjectMeta: metav1.ObjectMeta{Name: "robot", Namespace: "ns", UID: "uid-a"}},
		"b|ns/robot": {ObjectMeta: metav1.ObjectMeta{Name: "robot", Namespace: "ns", UID: "uid-b"}},
	}, secrets: map[string]*corev1.Secret{}}
	allowed := func(ctx context.Context, cluster string) bool { return ctx.Value(contextKey{}) == cluster }
	return NewIssuer(keys, testIssuer, nil), NewAuthenticator(keys, []string{testIssuer}, nil, allowed, l), l
}

func in(cluster string) context.Context {
	return context.WithValue(context.Background(), contextKey{}, cluster)
}

func TestBoundToken(t *testing.T) {
	iss, authn, l := newTest(t)
	robotA := Subject{Cluster: "a", Namespace: "ns", Name: "robot", UID: "uid-a"}
	token, _, err := iss.Bound(robotA, nil, time.Hour, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	resp, ok, err := authn.AuthenticateToken(in("a"), token)
	if !ok || err != nil {
		t.Fatalf("token of a in a: ok=%v err=%v, want authenticated", ok, err)
	}
	u := resp.User
	if u.GetName() != "system:serviceaccount:ns:robot" || u.GetUID() != "uid-a" {
		t.Errorf("user = %s (%s), want system:serviceaccount:ns:robot (uid-a)", u.GetName(), u.GetUID())
	}
	want := []string{"system:serviceaccounts", "system:serviceaccounts:ns", "system:authenticated"}
	if got := u.GetGroups(); len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Errorf("groups = %v, want %v", got, want)
	}
	if len(resp.Audiences) != 1 || resp.Audiences[0] != testIssuer {
		t.Errorf("audiences = %v, want [%s]", resp.Audiences, testIssuer)
	}
	// Cluster b has a same-named ServiceAccount: still not accepted there.
	if _, ok, _ := authn.AuthenticateToken(in("b"), token); ok {
		t.Error("token of a accepted in b")
	}
	// A re-created ServiceAccount (new UID) does not accept old tokens.
	l.sas["a|ns/robot"] = &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "robot", Namespace: "ns", UID: types.UID("other")}}
	if _, ok, err := authn.AuthenticateToken(in("a"), token); ok || err == nil {
		t.Errorf("token of a re-created service account: ok=%v err=%v, want an error", ok, err)
	}
	delete(l.sas, "a|ns/robot")
	if _, ok, err := authn.AuthenticateToken(in("a"), token); ok || err == nil {
		t.Errorf("token of a deleted service account: ok=%v err=%v, want an error", ok, err)
	}
}

func TestBoundTokenRefusals(t *testing.T) {
	iss, authn, _ := newTest(t)
	robotA := Subject{Cluster: "a", Namespace: "ns", Name: "robot", UID: "uid-a"}
	expired, _, _ := iss.Bound(robotA, nil, time.Hour, time.Now().Add(-2*time.Hour))
	otherAud, _, _ := iss.Bound(robotA, []string{"vault"}, time.Hour, time.Now())
	foreign, _, _ := NewIssuer(testKeys(t), testIssuer, nil).Bound(robotA, nil, time.Hour, time.Now())
	otherIssuer, _, _ := NewIssuer(authn.keys, "https://elsewhere", nil).Bound(robotA, []string{testIssuer}, time.Hour, time.Now())
	for _, tt := range []struct {
		name, token string
		wantErr     bool
	}{
		{"expired", expired, true},
		{"other audience", otherAud, true},
		{"signed by another key", foreign, true},
		{"other issuer (not ours)", otherIssuer, false},
		{"no JWT", "abcdef", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, ok, err := authn.AuthenticateToken(in("a"), tt.token)
			if ok || (err != nil) != tt.wantErr {
				t.Errorf("ok=%v err=%v, want not authenticated, error %v", ok, err, tt.wantErr)
			}
		})
	}
}

func TestLegacyToken(t *testing.T) {
	iss, authn, l := newTest(t)
	s := Subject{Cluster: "a", Namespace: "ns", Name: "robot", UID: "uid-a", SecretName: "robot-token"}
	token, err := iss.Legacy(s)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := authn.AuthenticateToken(in("a"), token); ok {
		t.Error("legacy token accepted without its Secret")
	}
	l.secrets["a|ns/robot-token"] = &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "robot-token", Namespace: "ns"},
		Data: map[string][]byte{corev1.ServiceAccountTokenKey: []byte(token)}}
	if _, ok, err := authn.AuthenticateToken(in("a"), token); !ok || err != nil {
		t.Errorf("legacy token with its Secret: ok=%v err=%v, want authenticated", ok, err)
	}
	if _, ok, _ := authn.AuthenticateToken(in("b"), token); ok {
		t.Error("legacy token of a accepted in b")
	}
	l.secrets["a|ns/robot-token"].Data[corev1.ServiceAccountTokenKey] = []byte("something else")
	if _, ok, _ := authn.AuthenticateToken(in("a"), token); ok {
		t.Error("legacy token accepted after its Secret's token changed")
	}
	delete(l.secrets, "a|ns/robot-token")
	if _, ok, _ := authn.AuthenticateToken(in("a"), token); ok {
		t.Error("legacy token accepted after its Secret was deleted")
	}
}

func TestKeysSurviveReload(t *testing.T) {
	path := filepath.Join(t.TempDir(), SigningKeyFile)
	if err := EnsureSigningKey(path); err != nil {
		t.Fatal(err)
	}
	k1, err := LoadKeys(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := EnsureSigningKey(path); err != nil {
		t.Fatal(err)
	}
	k2, err := LoadKeys(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if k1.kid != k2.kid {
		t.Errorf("key id changed across EnsureSigningKey: %s -> %s", k1.kid, k2.kid)
	}
	// A second key file verifies too (rotation).
	other := filepath.Join(t.TempDir(), "old.key")
	if err := EnsureSigningKey(other); err != nil {
		t.Fatal(err)
	}
	k3, err := LoadKeys(path, []string{other})
	if err != nil {
		t.Fatal(err)
	}
	if len(k3.verify) != 2 {
		t.Errorf("verification keys = %d, want 2 (signing key + --service-account-key-file)", len(k3.verify))
	}
}

// BenchmarkWarmToken measures authenticating a token already verified
// once: the path of every request but a token's first.
func BenchmarkWarmToken(b *testing.B) {
	iss, authn, _ := newTest(b)
	token, _, err := iss.Bound(Subject{Cluster: "a", Namespace: "ns", Name: "robot", UID: "uid-a"}, nil, time.Hour, time.Now())
	if err != nil {
		b.Fatal(err)
	}
	ctx := in("a")
	if _, ok, err := authn.AuthenticateToken(ctx, token); !ok || err != nil {
		b.Fatalf("ok=%v err=%v", ok, err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, ok, _ := authn.AuthenticateToken(ctx, token); !ok {
			b.Fatal("not authenticated")
		}
	}
}

// BenchmarkColdToken measures a token's first authentication (signature
// verification included).
func BenchmarkColdToken(b *testing.B) {
	iss, authn, _ := newTest(b)
	token, _, err := iss.Bound(Subject{Cluster: "a", Namespace: "ns", Name: "robot", UID: "uid-a"}, nil, time.Hour, time.Now())
	if err != nil {
		b.Fatal(err)
	}
	ctx := in("a")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		authn.cache.Clear()
		if _, ok, _ := authn.AuthenticateToken(ctx, token); !ok {
			b.Fatal("not authenticated")
		}
	}
}
