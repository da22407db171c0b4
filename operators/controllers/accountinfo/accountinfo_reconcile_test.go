package accountinfo

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/multicluster-runtime/pkg/multicluster"

	corev1alpha1 "github.com/meshplane/meshplane/apis/core/v1alpha1"
)

func TestAccountInfoFinalizer(t *testing.T) {
	info := &corev1alpha1.AccountInfo{ObjectMeta: metav1.ObjectMeta{Name: "account"}}
	accounts := []string{"team-a"}
	r := &reconciler{
		getInfo: func(context.Context, string, string) (*corev1alpha1.AccountInfo, error) { return info.DeepCopy(), nil },
		updateInfo: func(_ context.Context, _ string, i *corev1alpha1.AccountInfo) error {
			info = i
			return nil
		},
		countAccounts: func(context.Context, string) ([]string, error) { return accounts, nil },
	}
	if _, err := r.reconcile(context.Background(), "c", "account"); err != nil {
		t.Fatal(err)
	}
	if !controllerutil.ContainsFinalizer(info, Finalizer) {
		t.Fatal("finalizer not added")
	}
	now := metav1.Now()
	info.DeletionTimestamp = &now
	after, err := r.reconcile(context.Background(), "c", "account")
	if err != nil || after == 0 || !controllerutil.ContainsFinalizer(info, Finalizer) {
		t.Fatalf("deletion went ahead with an Account left: %v %v %v", after, err, info.Finalizers)
	}
	accounts = nil
	if _, err := r.reconcile(context.Background(), "c", "account"); err != nil {
		t.Fatal(err)
	}
	if controllerutil.ContainsFinalizer(info, Finalizer) {
		t.Fatal("finalizer kept with no Account left")
	}
}

func TestAccountInfoGoneCluster(t *testing.T) {
	r := &reconciler{getInfo: func(context.Context, string, string) (*corev1alpha1.AccountInfo, error) {
		return nil, multicluster.ErrClusterNotFound
	}}
	if after, err := r.reconcile(context.Background(), "gone", "account"); err != nil || after != 0 {
		t.Fatalf("%v %v", after, err)
	}
}
