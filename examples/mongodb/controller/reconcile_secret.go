package controller

import (
	"context"
	"errors"
	"net/url"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/meshplane/meshplane/examples/internal/consumersecret"
	mongodbv1alpha1 "github.com/meshplane/meshplane/examples/mongodb/api/v1alpha1"
)

// secretName is the consumer Secret of a MongoDB.
func secretName(db string) string { return db + "-connection" }

// connectionSecret step: once the replica set runs, write
// <name>-connection (username, password, host, port, uri) into the
// consumer's namespace; sets ConnectionSecretReady. Where the claim is not
// accepted the provider cannot reach secrets at all, and says so.
func (r *reconciler) connectionSecret(ctx context.Context, s *state) error {
	cond := metav1.Condition{Type: mongodbv1alpha1.ConditionConnectionSecret, Status: metav1.ConditionFalse, ObservedGeneration: s.db.Generation}
	defer func() { meta.SetStatusCondition(&s.db.Status.Conditions, cond) }()
	if !s.ready || s.db.Status.Connection == nil {
		cond.Reason, cond.Message = "Waiting", "written once the replica set runs"
		return nil
	}
	conn := s.db.Status.Connection
	name := secretName(s.db.Name)
	hostPort := conn.Host + ":" + strconv.Itoa(int(conn.Port))
	want := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: s.db.Namespace,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: mongodbv1alpha1.GroupVersion.String(), Kind: "MongoDB",
				Name: s.db.Name, UID: s.db.UID, Controller: ptr.To(true)}}},
		Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{
			"username": []byte(Username),
			"password": []byte(s.password),
			"host":     []byte(conn.Host),
			"port":     []byte(strconv.Itoa(int(conn.Port))),
			"uri": []byte((&url.URL{Scheme: "mongodb", User: url.UserPassword(Username, s.password), Host: hostPort, Path: "/",
				RawQuery: "replicaSet=" + url.QueryEscape(conn.ReplicaSet) + "&authSource=admin"}).String()),
		},
	}
	err := consumersecret.Apply(ctx, s.secrets, want, ManagedBy)
	switch {
	case err == nil:
		cond.Status, cond.Reason, cond.Message = metav1.ConditionTrue, "Written", "Secret "+name+" holds the connection details"
		return nil
	case errors.Is(err, consumersecret.ErrClaimNotAccepted):
		// Not retried: a change of the binding re-engages the workspace.
		cond.Reason, cond.Message = "ClaimNotAccepted", err.Error()
		return nil
	case errors.Is(err, consumersecret.ErrNotManaged):
		cond.Reason, cond.Message = "SecretExists", "Secret "+name+": "+err.Error()
		return nil
	default:
		cond.Reason, cond.Message = "SecretError", err.Error()
		return err
	}
}
