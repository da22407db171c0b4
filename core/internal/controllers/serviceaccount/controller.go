// Package serviceaccount does, for every namespace of every logical
// cluster, what kube-controller-manager's service account, root CA
// publisher and token controllers do for one cluster. One controller
// serves all clusters from cluster-aware wildcard informers.
//
// Reconcile steps for a namespace (one file each):
//  1. reconcile_defaultsa.go: the `default` ServiceAccount exists;
//  2. reconcile_rootca.go: the `kube-root-ca.crt` ConfigMap holds the
//     server's CA.
//
// For a Secret of type kubernetes.io/service-account-token,
// reconcile_tokensecret.go: it holds a legacy token of its ServiceAccount
// (and the CA and namespace), or is deleted once its ServiceAccount is
// gone.
package serviceaccount

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/cache"

	"github.com/meshplane/meshplane/core/internal/clusters"
	"github.com/meshplane/meshplane/core/internal/reconciler/client"
	"github.com/meshplane/meshplane/core/internal/reconciler/runner"
)

// Names kube gives these objects.
const (
	DefaultServiceAccount = "default"
	RootCAConfigMap       = "kube-root-ca.crt"
	RootCAKey             = "ca.crt"
)

// LegacyMinter signs the legacy token of a Secret of a ServiceAccount.
type LegacyMinter func(cluster string, sa *corev1.ServiceAccount, secret *corev1.Secret) (string, error)

// Informers the controller follows; the caller runs them. RootCAs may be
// limited to ConfigMaps named kube-root-ca.crt and TokenSecrets to
// Secrets of type kubernetes.io/service-account-token.
type Informers struct {
	Namespaces      cache.SharedIndexInformer
	ServiceAccounts cache.SharedIndexInformer
	RootCAs         cache.SharedIndexInformer
	TokenSecrets    cache.SharedIndexInformer
	// ClusterDeleting reports whether a logical cluster is being deleted:
	// nothing is created in it any more (its keys are being purged).
	ClusterDeleting func(cluster string) bool
}

// Controller reconciles namespaces and token Secrets.
type Controller struct {
	inf Informers

	defaultSA *defaultServiceAccountReconciler
	rootCA    *rootCAReconciler
	tokens    *tokenSecretReconciler
}

// New returns the controller; caPEM is the CA published in every namespace.
func New(serviceAccounts client.Client[*corev1.ServiceAccount], configMaps client.Client[*corev1.ConfigMap], secrets client.Client[*corev1.Secret],
	caPEM []byte, mint LegacyMinter, inf Informers) *Controller {
	c := &Controller{inf: inf}
	c.defaultSA = &defaultServiceAccountReconciler{
		exists: func(cluster, namespace string) bool {
			return cached[corev1.ServiceAccount](inf.ServiceAccounts, cluster, namespace, DefaultServiceAccount) != nil
		},
		create: func(ctx context.Context, cluster string, sa *corev1.ServiceAccount) error {
			_, err := serviceAccounts.Create(ctx, cluster, sa.Namespace, sa)
			return err
		},
	}
	c.rootCA = &rootCAReconciler{
		caPEM: string(caPEM),
		get: func(cluster, namespace string) *corev1.ConfigMap {
			return cached[corev1.ConfigMap](inf.RootCAs, cluster, namespace, RootCAConfigMap)
		},
		create: func(ctx context.Context, cluster string, cm *corev1.ConfigMap) error {
			_, err := configMaps.Create(ctx, cluster, cm.Namespace, cm)
			return err
		},
		update: func(ctx context.Context, cluster string, cm *corev1.ConfigMap) error {
			_, err := configMaps.Update(ctx, cluster, cm.Namespace, cm.Name, cm)
			return err
		},
	}
	c.tokens = &tokenSecretReconciler{
		caPEM: caPEM,
		getServiceAccount: func(ctx context.Context, cluster, namespace, name string) (*corev1.ServiceAccount, error) {
			if sa := cached[corev1.ServiceAccount](inf.ServiceAccounts, cluster, namespace, name); sa != nil {
				return sa, nil
			}
			sa, err := serviceAccounts.Get(ctx, cluster, namespace, name)
			if apierrors.IsNotFound(err) {
				return nil, nil
			}
			return sa, err
		},
		mint: mint,
		update: func(ctx context.Context, cluster string, s *corev1.Secret) error {
			_, err := secrets.Update(ctx, cluster, s.Namespace, s.Name, s)
			return err
		},
		delete: func(ctx context.Context, cluster string, s *corev1.Secret) error {
			err := secrets.Delete(ctx, cluster, s.Namespace, s.Name)
			if apierrors.IsNotFound(err) {
				return nil
			}
			return err
		},
	}
	return c
}

// cached returns an object of an informer's store, or nil.
func cached[T any](inf cache.SharedIndexInformer, cluster, namespace, name string) *T {
	obj, ok, err := inf.GetStore().GetByKey(runner.Key{Cluster: cluster, Namespace: namespace, Name: name}.String())
	if err != nil || !ok {
		return nil
	}
	t, _ := obj.(*T)
	return t
}

// Run works until ctx is done.
func (c *Controller) Run(ctx context.Context) {
	namespaces := runner.New("serviceaccount-namespace", 2, c.reconcileNamespace)
	tokens := runner.New("serviceaccount-token", 2, c.reconcileTokenSecret)
	_ = namespaces.EnqueueFrom(c.inf.Namespaces, runner.ObjectKeys)
	_ = namespaces.EnqueueFrom(c.inf.ServiceAccounts, namespaceOf(DefaultServiceAccount))
	_ = namespaces.EnqueueFrom(c.inf.RootCAs, namespaceOf(RootCAConfigMap))
	_ = tokens.EnqueueFrom(c.inf.TokenSecrets, runner.ObjectKeys)
	_ = tokens.EnqueueFrom(c.inf.ServiceAccounts, c.tokenSecretsOf)
	go tokens.Run(ctx)
	namespaces.Run(ctx)
}

// namespaceOf maps an object named name to the key of its namespace.
func namespaceOf(name string) runner.KeysFunc {
	return func(obj any) []runner.Key {
		k, ok := runner.KeyOf(obj)
		if !ok || k.Name != name {
			return nil
		}
		return []runner.Key{{Cluster: k.Cluster, Name: k.Namespace}}
	}
}

// tokenSecretsOf maps a ServiceAccount to its token Secrets.
func (c *Controller) tokenSecretsOf(obj any) []runner.Key {
	sa, ok := obj.(*corev1.ServiceAccount)
	if !ok {
		return nil
	}
	cluster := sa.Annotations[clusters.Annotation]
	var out []runner.Key
	for _, o := range c.inf.TokenSecrets.GetStore().List() {
		s := o.(*corev1.Secret)
		if s.Namespace == sa.Namespace && s.Annotations[corev1.ServiceAccountNameKey] == sa.Name && s.Annotations[clusters.Annotation] == cluster {
			out = append(out, runner.ObjectKeys(s)...)
		}
	}
	return out
}

func (c *Controller) reconcileNamespace(ctx context.Context, key runner.Key) (time.Duration, error) {
	ns := cached[corev1.Namespace](c.inf.Namespaces, key.Cluster, "", key.Name)
	if ns == nil || ns.DeletionTimestamp != nil || ns.Status.Phase == corev1.NamespaceTerminating || c.clusterDeleting(key.Cluster) {
		return 0, nil
	}
	if err := c.defaultSA.reconcile(ctx, key.Cluster, ns.Name); err != nil {
		return 0, err
	}
	return 0, c.rootCA.reconcile(ctx, key.Cluster, ns.Name)
}

func (c *Controller) clusterDeleting(cluster string) bool {
	return c.inf.ClusterDeleting != nil && c.inf.ClusterDeleting(cluster)
}

func (c *Controller) reconcileTokenSecret(ctx context.Context, key runner.Key) (time.Duration, error) {
	s := cached[corev1.Secret](c.inf.TokenSecrets, key.Cluster, key.Namespace, key.Name)
	if s == nil || s.DeletionTimestamp != nil || s.Type != corev1.SecretTypeServiceAccountToken {
		return 0, nil
	}
	ns := cached[corev1.Namespace](c.inf.Namespaces, key.Cluster, "", key.Namespace)
	if (ns != nil && ns.DeletionTimestamp != nil) || c.clusterDeleting(key.Cluster) {
		return 0, nil
	}
	return 0, c.tokens.reconcile(ctx, key.Cluster, s)
}
