package controller

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"net/url"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/meshplane/meshplane/examples/internal/consumersecret"
	postgresv1alpha1 "github.com/meshplane/meshplane/examples/postgres/api/v1alpha1"
)

// secretName is the consumer Secret of a Database.
func secretName(db string) string { return db + "-credentials" }

// readCredentials step: the role's password is the one in the consumer's
// Secret; without one (first time, Secret deleted) a new one is made,
// which ensureDatabase sets on the role. Where the claim is not accepted
// the role gets no password (nobody can log in) and CredentialsReady says
// why.
func (r *reconciler) readCredentials(ctx context.Context, s *state) error {
	got, err := consumersecret.Get(ctx, s.secrets, s.db.Namespace, secretName(s.db.Name), ManagedBy)
	switch {
	case err == nil && got != nil && len(got.Data["password"]) > 0:
		s.password = string(got.Data["password"])
		return nil
	case err == nil:
		b := make([]byte, 24)
		if _, err := rand.Read(b); err != nil {
			return err
		}
		s.password, s.newPassword = base64.RawURLEncoding.EncodeToString(b), true
		return nil
	default:
		return r.credentialsFailed(s, err)
	}
}

// writeCredentials step: <name>-credentials (host, port, database,
// username, password, uri) in the consumer's namespace; sets
// CredentialsReady.
func (r *reconciler) writeCredentials(ctx context.Context, s *state) error {
	name := secretName(s.db.Name)
	port := strconv.Itoa(r.port)
	uri := (&url.URL{Scheme: "postgres", User: url.UserPassword(s.role, s.password), Host: r.host + ":" + port,
		Path: "/" + s.database, RawQuery: "sslmode=disable"}).String()
	want := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: s.db.Namespace,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: postgresv1alpha1.GroupVersion.String(), Kind: "Database",
				Name: s.db.Name, UID: s.db.UID, Controller: ptr.To(true)}}},
		Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{"host": []byte(r.host), "port": []byte(port), "database": []byte(s.database),
			"username": []byte(s.role), "password": []byte(s.password), "uri": []byte(uri)},
	}
	if err := consumersecret.Apply(ctx, s.secrets, want, ManagedBy); err != nil {
		return r.credentialsFailed(s, err)
	}
	s.db.Status.SecretName = name
	setCondition(s, postgresv1alpha1.ConditionCredentials, true, "Written", "Secret "+name+" holds the credentials of role "+s.role)
	return nil
}

// credentialsFailed reports a Secret error; those a retry cannot fix
// (claim not accepted, a foreign Secret of the name) are permanent.
func (r *reconciler) credentialsFailed(s *state, err error) error {
	switch {
	case errors.Is(err, consumersecret.ErrClaimNotAccepted):
		setCondition(s, postgresv1alpha1.ConditionCredentials, false, "ClaimNotAccepted", err.Error())
		return nil
	case errors.Is(err, consumersecret.ErrNotManaged):
		setCondition(s, postgresv1alpha1.ConditionCredentials, false, "SecretExists", "Secret "+secretName(s.db.Name)+": "+err.Error())
		return &permanentError{msg: err.Error()}
	default:
		setCondition(s, postgresv1alpha1.ConditionCredentials, false, "SecretError", err.Error())
		return err
	}
}
