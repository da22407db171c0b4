package tenancy

import (
	"context"
	"crypto/sha256"
	"fmt"
	"math/big"

	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/meshplane/meshplane/core/internal/clusters"
	"github.com/meshplane/meshplane/core/internal/reconciler/client"
)

// ShardName is the name of the one shard a Meshplane core is, as kcp names
// its first shard.
const ShardName = "root"

// ShardAnnotation names the shard a LogicalCluster is scheduled on; kcp
// sets it on the LogicalCluster and on its owner (the Workspace).
const ShardAnnotation = corev1alpha1.LogicalClusterShardAnnotationKey

// ShardHashAnnotation is the older form kcp's scheduler still writes on
// Workspaces: ShardNameHash of the shard's name.
const ShardHashAnnotation = "internal.tenancy.kcp.io/shard"

// ShardNameHash is kcp's short hash of a shard name: the first 8 lower-case
// base36 digits of sha224(name).
func ShardNameHash(name string) string {
	sum := sha256.Sum224([]byte(name))
	s := new(big.Int).SetBytes(sum[:]).Text(36)
	return s[:8]
}

// ShardAnnotations are the annotations kcp puts on a Workspace scheduled
// on shard name.
func ShardAnnotations(name string) map[string]string {
	return map[string]string{ShardAnnotation: name, ShardHashAnnotation: ShardNameHash(name)}
}

// ShardNameLabel is the label kcp puts on every Shard, valued with the
// shard's name: location selectors such as `kubectl ws create
// --location-selector name=root` select shards by it.
const ShardNameLabel = "name"

// RegisterShard creates or updates Shard name in root (shards writes
// there: in process on the root shard, through its API on the others),
// labelled ShardNameLabel=name as kcp does.
func RegisterShard(ctx context.Context, shards client.Client[*corev1alpha1.Shard], name string, spec corev1alpha1.ShardSpec) error {
	existing, err := shards.Get(ctx, clusters.Root, "", name)
	if apierrors.IsNotFound(err) {
		shard := &corev1alpha1.Shard{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{ShardNameLabel: name}}, Spec: spec}
		if _, err := shards.Create(ctx, clusters.Root, "", shard); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("registering shard %s: %w", name, err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading shard %s: %w", name, err)
	}
	if existing.Spec == spec && existing.Labels[ShardNameLabel] == name {
		return nil
	}
	existing = existing.DeepCopy()
	existing.Spec = spec
	if existing.Labels == nil {
		existing.Labels = map[string]string{}
	}
	existing.Labels[ShardNameLabel] = name
	if _, err := shards.Update(ctx, clusters.Root, "", name, existing); err != nil {
		return fmt.Errorf("updating shard %s: %w", name, err)
	}
	return nil
}
