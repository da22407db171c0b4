package account

import (
	"context"
	"testing"

	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	corev1alpha1 "github.com/meshplane/meshplane/apis/core/v1alpha1"
)

// objects is an in-memory store keyed by cluster and name, handed to the
// steps as plain functions.
type objects[T any] struct {
	items   map[string]T
	created []string
	deleted []string
	err     error // returned by every call when set
}

func newObjects[T any]() *objects[T] { return &objects[T]{items: map[string]T{}} }

func (o *objects[T]) get(_ context.Context, cluster, name string) (T, error) {
	var zero T
	if o.err != nil {
		return zero, o.err
	}
	v, ok := o.items[cluster+"/"+name]
	if !ok {
		return zero, apierrors.NewNotFound(schema.GroupResource{Resource: "things"}, name)
	}
	return v, nil
}

func (o *objects[T]) put(cluster, name string, v T) { o.items[cluster+"/"+name] = v }

func (o *objects[T]) del(_ context.Context, cluster, name string) error {
	if o.err != nil {
		return o.err
	}
	if _, ok := o.items[cluster+"/"+name]; !ok {
		return apierrors.NewNotFound(schema.GroupResource{Resource: "things"}, name)
	}
	o.deleted = append(o.deleted, cluster+"/"+name)
	delete(o.items, cluster+"/"+name)
	return nil
}

func org(name string) *corev1alpha1.Account {
	return &corev1alpha1.Account{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: "uid-" + "name", Generation: 1},
		Spec:       corev1alpha1.AccountSpec{Type: corev1alpha1.AccountTypeOrg, DisplayName: name, Creator: ptr.To("alice")},
	}
}

func account(name string) *corev1alpha1.Account {
	a := org(name)
	a.Spec.Type = corev1alpha1.AccountTypeAccount
	return a
}

func readyWorkspace(name, cluster string) *tenancyv1alpha1.Workspace {
	ws := &tenancyv1alpha1.Workspace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	ws.Spec.Cluster = cluster
	ws.Spec.URL = "https://core/clusters/root:orgs:" + name
	ws.Status.Phase = "Ready"
	return ws
}

func requireCondition(t *testing.T, acc *corev1alpha1.Account, typ string, status metav1.ConditionStatus, reason string) *metav1.Condition {
	t.Helper()
	c := meta.FindStatusCondition(acc.Status.Conditions, typ)
	if c == nil {
		t.Fatalf("no %s condition; conditions: %+v", typ, acc.Status.Conditions)
	}
	if c.Status != status || c.Reason != reason {
		t.Fatalf("%s = %s/%s (%s), want %s/%s", typ, c.Status, c.Reason, c.Message, status, reason)
	}
	return c
}
