package apiexport

import (
	"context"
	"fmt"

	apisv1alpha2 "github.com/kcp-dev/sdk/apis/apis/v1alpha2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/meshplane/meshplane/core/internal/clusters"
	"github.com/meshplane/meshplane/core/internal/reconciler/client"
)

// RootExports are the APIExports of kcp's own APIs that root has, as in
// kcp, so that permission claims can name those APIs by identity hash
// (status.identityHash of root's export). The server serves the APIs
// itself: the exports carry an identity and no resources of their own.
var RootExports = []string{"tenancy.kcp.io", "topology.kcp.io", "shards.core.kcp.io"}

// EnsureRootExports creates the RootExports in root (the APIExport
// controller gives them their identities).
func EnsureRootExports(ctx context.Context, exports client.Client[*apisv1alpha2.APIExport]) error {
	for _, name := range RootExports {
		e := &apisv1alpha2.APIExport{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if _, err := exports.Create(ctx, clusters.Root, "", e); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating APIExport %s in root: %w", name, err)
		}
	}
	return nil
}

// BuiltinGroup reports whether the server serves group itself: a claim
// on it names the server's resource whatever its identity hash.
func (e *Exports) BuiltinGroup(group string) bool { return e.Builtin[group] }
