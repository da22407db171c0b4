package serviceaccount

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/cache"

	kcpcache "github.com/kcp-dev/apimachinery/v2/pkg/cache"
)

// InformerLookup answers from cluster-aware wildcard informers; a miss
// (an object created a moment ago, or one that is gone) is confirmed by
// a read from storage, so a fresh ServiceAccount's token works at once and
// a deleted one's fails.
type InformerLookup struct {
	ServiceAccounts cache.SharedIndexInformer
	// Secrets holds the token Secrets (type kubernetes.io/service-account-token).
	Secrets           cache.SharedIndexInformer
	GetServiceAccount func(ctx context.Context, cluster, namespace, name string) (*corev1.ServiceAccount, error)
	GetSecret         func(ctx context.Context, cluster, namespace, name string) (*corev1.Secret, error)
}

// ServiceAccount implements Lookup.
func (l *InformerLookup) ServiceAccount(ctx context.Context, cluster, namespace, name string) (*corev1.ServiceAccount, error) {
	return lookup(ctx, l.ServiceAccounts, l.GetServiceAccount, cluster, namespace, name)
}

// Secret implements Lookup.
func (l *InformerLookup) Secret(ctx context.Context, cluster, namespace, name string) (*corev1.Secret, error) {
	return lookup(ctx, l.Secrets, l.GetSecret, cluster, namespace, name)
}

func lookup[T any](ctx context.Context, inf cache.SharedIndexInformer, get func(ctx context.Context, cluster, namespace, name string) (*T, error),
	cluster, namespace, name string) (*T, error) {
	key := kcpcache.ToClusterAwareKey(cluster, namespace, name)
	if obj, ok, err := inf.GetStore().GetByKey(key); err == nil && ok {
		if t, ok := obj.(*T); ok {
			return t, nil
		}
	}
	t, err := get(ctx, cluster, namespace, name)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return t, err
}
