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

// rootExportOf names the root export that covers a resource the server
// serves itself (kcp's root exports these APIs by identity).
func rootExportOf(group, resource string) (string, bool) {
	switch {
	case group == "tenancy.kcp.io":
		return "tenancy.kcp.io", true
	case group == "core.kcp.io" && resource == "shards":
		return "shards.core.kcp.io", true
	}
	return "", false
}

// BuiltinIdentity reports whether identity is the identity of root's
// export of group/resource, a resource the server serves itself: kcp
// names such resources <resource>:<identity> on the wildcard.
func (e *Exports) BuiltinIdentity(ctx context.Context, group, resource, identity string) bool {
	name, ok := rootExportOf(group, resource)
	if !ok || identity == "" {
		return false
	}
	export, err := e.Export(ctx, clusters.Root, name)
	return err == nil && export.Status.IdentityHash == identity
}
