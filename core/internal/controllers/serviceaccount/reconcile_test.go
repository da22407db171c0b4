package serviceaccount

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestDefaultServiceAccountReconciler(t *testing.T) {
	for _, tt := range []struct {
		name       string
		exists     bool
		wantCreate bool
	}{
		{"missing: created", false, true},
		{"present: left alone", true, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var created *corev1.ServiceAccount
			r := &defaultServiceAccountReconciler{
				exists: func(cluster, namespace string) bool { return tt.exists },
				create: func(_ context.Context, cluster string, sa *corev1.ServiceAccount) error {
					if cluster != "c1" {
						t.Errorf("created in cluster %s, want c1", cluster)
					}
					created = sa
					return nil
				},
			}
			if err := r.reconcile(context.Background(), "c1", "team"); err != nil {
				t.Fatal(err)
			}
			if (created != nil) != tt.wantCreate {
				t.Fatalf("created = %v, want %v", created, tt.wantCreate)
			}
			if created != nil && (created.Name != "default" || created.Namespace != "team") {
				t.Errorf("created %s/%s, want team/default", created.Namespace, created.Name)
			}
		})
	}
}

func TestRootCAReconciler(t *testing.T) {
	const ca = "-----BEGIN CERTIFICATE-----\nabc\n-----END CERTIFICATE-----\n"
	cm := func(data map[string]string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: RootCAConfigMap, Namespace: "team"}, Data: data}
	}
	for _, tt := range []struct {
		name                   string
		existing               *corev1.ConfigMap
		wantCreate, wantUpdate bool
	}{
		{"missing: created", nil, true, false},
		{"current: left alone", cm(map[string]string{"ca.crt": ca}), false, false},
		{"changed by a user: restored", cm(map[string]string{"ca.crt": "forged"}), false, true},
		{"extra key: removed", cm(map[string]string{"ca.crt": ca, "x": "y"}), false, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var written *corev1.ConfigMap
			var created, updated bool
			r := &rootCAReconciler{caPEM: ca,
				get: func(cluster, namespace string) *corev1.ConfigMap { return tt.existing },
				create: func(_ context.Context, _ string, c *corev1.ConfigMap) error {
					created, written = true, c
					return nil
				},
				update: func(_ context.Context, _ string, c *corev1.ConfigMap) error {
					updated, written = true, c
					return nil
				},
			}
			if err := r.reconcile(context.Background(), "c1", "team"); err != nil {
				t.Fatal(err)
			}
			if created != tt.wantCreate || updated != tt.wantUpdate {
				t.Fatalf("created=%v updated=%v, want %v %v", created, updated, tt.wantCreate, tt.wantUpdate)
			}
			if written != nil && (len(written.Data) != 1 || written.Data["ca.crt"] != ca || written.Name != RootCAConfigMap) {
				t.Errorf("wrote %s %v, want kube-root-ca.crt holding only ca.crt", written.Name, written.Data)
			}
		})
	}
}

func TestTokenSecretReconciler(t *testing.T) {
	robot := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "robot", Namespace: "team", UID: "uid-1"}}
	secret := func(uid, token string) *corev1.Secret {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "robot-token", Namespace: "team",
			Annotations: map[string]string{corev1.ServiceAccountNameKey: "robot"}}, Type: corev1.SecretTypeServiceAccountToken}
		if uid != "" {
			s.Annotations[corev1.ServiceAccountUIDKey] = uid
		}
		if token != "" {
			s.Data = map[string][]byte{"token": []byte(token), "ca.crt": []byte("CA"), "namespace": []byte("team")}
		}
		return s
	}
	for _, tt := range []struct {
		name       string
		sa         *corev1.ServiceAccount
		secret     *corev1.Secret
		wantUpdate bool
		wantDelete bool
	}{
		{"new secret: filled", robot, secret("", ""), true, false},
		{"filled: left alone", robot, secret("uid-1", "t0"), false, false},
		{"service account gone: deleted", nil, secret("uid-1", "t0"), false, true},
		{"service account re-created: deleted", robot, secret("uid-0", "t0"), false, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var updated *corev1.Secret
			var deleted bool
			r := &tokenSecretReconciler{caPEM: []byte("CA"),
				getServiceAccount: func(_ context.Context, cluster, namespace, name string) (*corev1.ServiceAccount, error) {
					if cluster != "c1" || namespace != "team" || name != "robot" {
						t.Errorf("looked up %s|%s/%s, want c1|team/robot", cluster, namespace, name)
					}
					return tt.sa, nil
				},
				mint: func(cluster string, sa *corev1.ServiceAccount, s *corev1.Secret) (string, error) {
					return "minted-" + cluster + "-" + string(sa.UID) + "-" + s.Name, nil
				},
				update: func(_ context.Context, _ string, s *corev1.Secret) error { updated = s; return nil },
				delete: func(context.Context, string, *corev1.Secret) error { deleted = true; return nil },
			}
			if err := r.reconcile(context.Background(), "c1", tt.secret); err != nil {
				t.Fatal(err)
			}
			if (updated != nil) != tt.wantUpdate || deleted != tt.wantDelete {
				t.Fatalf("updated=%v deleted=%v, want %v %v", updated != nil, deleted, tt.wantUpdate, tt.wantDelete)
			}
			if updated != nil {
				if got := string(updated.Data["token"]); got != "minted-c1-uid-1-robot-token" {
					t.Errorf("token = %q, want the minted one", got)
				}
				if updated.Annotations[corev1.ServiceAccountUIDKey] != "uid-1" || string(updated.Data["namespace"]) != "team" || string(updated.Data["ca.crt"]) != "CA" {
					t.Errorf("secret = %v %v, want uid annotation, namespace and ca.crt", updated.Annotations, updated.Data)
				}
			}
		})
	}
}
