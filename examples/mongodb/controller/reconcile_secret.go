package controller

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	mongodbv1alpha1 "github.com/meshplane/meshplane/examples/mongodb/api/v1alpha1"
)

// secretName is the consumer Secret of a MongoDB.
func secretName(db string) string { return db + "-connection" }

// errClaim: the consumer's binding does not accept the claim on secrets.
var errClaim = errors.New("the APIBinding does not accept the export's permission claim on secrets")

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
	data := map[string][]byte{
		"username": []byte(Username),
		"password": []byte(s.password),
		"host":     []byte(conn.Host),
		"port":     []byte(strconv.Itoa(int(conn.Port))),
		"uri": []byte((&url.URL{Scheme: "mongodb", User: url.UserPassword(Username, s.password),
			Host: conn.Host + ":" + strconv.Itoa(int(conn.Port)), Path: "/",
			RawQuery: "replicaSet=" + url.QueryEscape(conn.ReplicaSet) + "&authSource=admin"}).String()),
	}
	api := s.secrets.CoreV1().Secrets(s.db.Namespace)
	got, err := api.Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err) && notFoundIsObject(err, name):
		sec := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: s.db.Namespace,
				Labels: map[string]string{LabelManagedBy: ManagedBy},
				OwnerReferences: []metav1.OwnerReference{{APIVersion: mongodbv1alpha1.GroupVersion.String(), Kind: "MongoDB",
					Name: s.db.Name, UID: s.db.UID, Controller: ptr.To(true)}}},
			Type: corev1.SecretTypeOpaque,
			Data: data,
		}
		if _, err := api.Create(ctx, sec, metav1.CreateOptions{}); err != nil {
			return r.secretFailed(&cond, err)
		}
	case err != nil:
		return r.secretFailed(&cond, err)
	case got.Labels[LabelManagedBy] != ManagedBy:
		cond.Reason, cond.Message = "SecretExists", fmt.Sprintf("Secret %s exists and was not written by the provider; it is left alone", name)
		return nil
	default:
		if !equalData(got.Data, data) {
			got.Data = data
			if _, err := api.Update(ctx, got, metav1.UpdateOptions{}); err != nil {
				return r.secretFailed(&cond, err)
			}
		}
	}
	cond.Status, cond.Reason, cond.Message = metav1.ConditionTrue, "Written", "Secret "+name+" holds the connection details"
	return nil
}

// secretFailed sets the condition for a failed secret call; a claim that
// is not accepted is no error to retry (the binding's change re-engages).
func (r *reconciler) secretFailed(cond *metav1.Condition, err error) error {
	if claimMissing(err) {
		cond.Reason, cond.Message = "ClaimNotAccepted", fmt.Sprintf("%v: %v", errClaim, err)
		return nil
	}
	cond.Reason, cond.Message = "SecretError", err.Error()
	return err
}

// claimMissing: the virtual workspace does not serve secrets in this
// consumer (claim rejected or not accepted), or forbids them.
func claimMissing(err error) bool {
	return apierrors.IsForbidden(err) || apierrors.IsMethodNotSupported(err) ||
		(apierrors.IsNotFound(err) && !notFoundIsObject(err, ""))
}

// notFoundIsObject tells a missing Secret (details name the object) from
// a resource that is not served at all.
func notFoundIsObject(err error, name string) bool {
	var st apierrors.APIStatus
	if !errors.As(err, &st) || st.Status().Details == nil {
		return false
	}
	d := st.Status().Details
	return d.Kind == "secrets" && d.Name != "" && (name == "" || d.Name == name)
}

func equalData(a, b map[string][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if string(b[k]) != string(v) {
			return false
		}
	}
	return true
}
