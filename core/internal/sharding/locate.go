package sharding

import (
	"context"
	"fmt"
	"strings"

	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// shardAnnotation names the shard of a Workspace's logical cluster.
const shardAnnotation = corev1alpha1.LogicalClusterShardAnnotationKey

// Locate finds the shard and logical cluster of a workspace path by
// walking the tree from root: each Workspace, read on the shard of its
// parent, names its cluster and shard. A path that is not there is a
// NotFound error.
func (s *Shards) Locate(ctx context.Context, path string) (corev1alpha1.Shard, string, error) {
	segments := strings.Split(path, ":")
	if segments[0] != RootShard {
		return corev1alpha1.Shard{}, "", apierrors.NewNotFound(tenancyv1alpha1.Resource("workspaces"), path)
	}
	shard, err := s.Get(ctx, RootShard)
	if err != nil {
		return corev1alpha1.Shard{}, "", err
	}
	cluster := "root"
	for _, name := range segments[1:] {
		c, err := s.ClientsFor(shard.Spec.BaseURL)
		if err != nil {
			return corev1alpha1.Shard{}, "", err
		}
		ws, err := c.Workspaces.Get(ctx, cluster, "", name)
		if err != nil {
			return corev1alpha1.Shard{}, "", err
		}
		if ws.Spec.Mount != nil || ws.Spec.Cluster == "" {
			return corev1alpha1.Shard{}, "", apierrors.NewNotFound(tenancyv1alpha1.Resource("workspaces"), path)
		}
		on := ws.Annotations[shardAnnotation]
		if on == "" {
			on = RootShard
		}
		if on != shard.Name {
			if shard, err = s.Get(ctx, on); err != nil {
				return corev1alpha1.Shard{}, "", fmt.Errorf("workspace %s: %w", path, err)
			}
		}
		cluster = ws.Spec.Cluster
	}
	return shard, cluster, nil
}

// WorkspaceType reads a WorkspaceType in the workspace at path, wherever
// it is (Locate).
func (s *Shards) WorkspaceType(ctx context.Context, path, name string) (*tenancyv1alpha1.WorkspaceType, error) {
	shard, cluster, err := s.Locate(ctx, path)
	if err != nil {
		return nil, err
	}
	c, err := s.ClientsFor(shard.Spec.BaseURL)
	if err != nil {
		return nil, err
	}
	return c.Types.Get(ctx, cluster, "", name)
}
