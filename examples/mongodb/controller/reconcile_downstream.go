package controller

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	mongodbv1alpha1 "github.com/meshplane/meshplane/examples/mongodb/api/v1alpha1"
)

// syncDownstream step: the password Secret and the MongoDBCommunity object
// downstream, both labelled with the consumer; sets Synced.
func (r *reconciler) syncDownstream(ctx context.Context, s *state) error {
	pw, err := r.password(ctx, s.consumer)
	if err != nil {
		return r.syncFailed(s, err)
	}
	s.password = pw
	want := r.desired(s)
	got := &unstructured.Unstructured{}
	got.SetGroupVersionKind(DownstreamGVK)
	err = r.downstreamReader.Get(ctx, client.ObjectKey{Namespace: r.namespace, Name: want.GetName()}, got)
	switch {
	case apierrors.IsNotFound(err):
		if err := r.downstream.Create(ctx, want); err != nil {
			return r.syncFailed(s, fmt.Errorf("creating downstream %s/%s: %w", r.namespace, want.GetName(), err))
		}
	case err != nil:
		return r.syncFailed(s, fmt.Errorf("reading downstream %s/%s: %w", r.namespace, want.GetName(), err))
	default:
		if !equality.Semantic.DeepEqual(got.Object["spec"], want.Object["spec"]) || !hasLabels(got.GetLabels(), want.GetLabels()) {
			got.Object["spec"] = want.Object["spec"]
			labels := got.GetLabels()
			if labels == nil {
				labels = map[string]string{}
			}
			for k, v := range want.GetLabels() {
				labels[k] = v
			}
			got.SetLabels(labels)
			if err := r.downstream.Update(ctx, got); err != nil {
				return r.syncFailed(s, fmt.Errorf("updating downstream %s/%s: %w", r.namespace, got.GetName(), err))
			}
		}
	}
	s.db.Status.ObservedGeneration = s.db.Generation
	meta.SetStatusCondition(&s.db.Status.Conditions, metav1.Condition{Type: mongodbv1alpha1.ConditionSynced, Status: metav1.ConditionTrue,
		Reason: "Synced", Message: "MongoDBCommunity " + r.namespace + "/" + want.GetName() + " matches the spec", ObservedGeneration: s.db.Generation})
	return nil
}

func (r *reconciler) syncFailed(s *state, err error) error {
	meta.SetStatusCondition(&s.db.Status.Conditions, metav1.Condition{Type: mongodbv1alpha1.ConditionSynced, Status: metav1.ConditionFalse,
		Reason: "DownstreamError", Message: err.Error(), ObservedGeneration: s.db.Generation})
	if s.db.Status.Phase == "" {
		s.db.Status.Phase = mongodbv1alpha1.PhasePending
	}
	return err
}

// password returns the password of Username, creating the downstream
// Secret <name>-password with a random one the first time.
func (r *reconciler) password(ctx context.Context, c consumer) (string, error) {
	name := c.downstreamName() + "-password"
	sec := &corev1.Secret{}
	err := r.downstreamReader.Get(ctx, client.ObjectKey{Namespace: r.namespace, Name: name}, sec)
	if err == nil && len(sec.Data["password"]) > 0 {
		return string(sec.Data["password"]), nil
	}
	if err != nil && !apierrors.IsNotFound(err) {
		return "", fmt.Errorf("reading downstream secret %s/%s: %w", r.namespace, name, err)
	}
	b := make([]byte, 18)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	pw := base64.RawURLEncoding.EncodeToString(b)
	sec = &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: r.namespace, Name: name, Labels: c.labels()},
		Data:       map[string][]byte{"password": []byte(pw)},
	}
	if err := r.downstream.Create(ctx, sec); err != nil {
		return "", fmt.Errorf("creating downstream secret %s/%s: %w", r.namespace, name, err)
	}
	return pw, nil
}

// desired is the MongoDBCommunity object for s: a SCRAM-authenticated
// replica set with one user, Username, whose password is in the
// downstream Secret.
func (r *reconciler) desired(s *state) *unstructured.Unstructured {
	name := s.consumer.downstreamName()
	spec := s.db.Spec
	members := spec.Members
	if members == 0 {
		members = 3
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"spec": map[string]any{
			"type":     "ReplicaSet",
			"members":  int64(members),
			"version":  spec.Version,
			"security": map[string]any{"authentication": map[string]any{"modes": []any{"SCRAM"}}},
			"users": []any{map[string]any{
				"name":                       Username,
				"db":                         "admin",
				"passwordSecretRef":          map[string]any{"name": name + "-password"},
				"roles":                      []any{map[string]any{"name": "readWriteAnyDatabase", "db": "admin"}},
				"scramCredentialsSecretName": name + "-scram",
			}},
			"statefulSet": map[string]any{"spec": map[string]any{"volumeClaimTemplates": []any{map[string]any{
				"metadata": map[string]any{"name": "data-volume"},
				"spec": map[string]any{
					"accessModes": []any{"ReadWriteOnce"},
					"resources":   map[string]any{"requests": map[string]any{"storage": spec.StorageSize.String()}},
				},
			}}}},
		},
	}}
	u.SetGroupVersionKind(DownstreamGVK)
	u.SetNamespace(r.namespace)
	u.SetName(name)
	u.SetLabels(s.consumer.labels())
	return u
}

func hasLabels(have, want map[string]string) bool {
	for k, v := range want {
		if have[k] != v {
			return false
		}
	}
	return true
}
