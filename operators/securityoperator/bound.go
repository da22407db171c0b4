package securityoperator

import (
	"context"
	"fmt"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"

	"github.com/meshplane/meshplane/apis/fga"
)

// builtinGroups are served by every workspace; their kinds are in the core
// module (or are reviews and requests that name no object to share).
var builtinGroups = map[string]bool{
	"": true, "rbac.authorization.k8s.io": true, "coordination.k8s.io": true, "events.k8s.io": true,
	"admissionregistration.k8s.io": true, "authentication.k8s.io": true, "authorization.k8s.io": true,
	"certificates.k8s.io": true, "apiextensions.k8s.io": true, "core.platform-mesh.io": true,
}

// boundResources lists the resources a workspace serves beyond the
// built-in ones and kcp's own groups, from its discovery: the APIs bound
// into it (and its CRDs), as Platform Mesh's security-operator does for an
// organization's workspace. A workspace not served (gone, or still
// initializing) has none. complete is false then, and when some groups
// could not be discovered: an answer worth asking again.
func boundResources(base *rest.Config) func(ctx context.Context, workspace string) (rs []fga.Resource, complete bool, err error) {
	return func(ctx context.Context, workspace string) ([]fga.Resource, bool, error) {
		cfg := rest.CopyConfig(base)
		cfg.Host = base.Host + "/clusters/" + workspace
		dc, err := discovery.NewDiscoveryClientForConfig(cfg)
		if err != nil {
			return nil, false, err
		}
		lists, err := dc.ServerPreferredResources()
		complete := err == nil
		if err != nil {
			if apierrors.IsNotFound(err) {
				return nil, false, nil
			}
			if !discovery.IsGroupDiscoveryFailedError(err) {
				return nil, false, fmt.Errorf("discovery of %s: %w", workspace, err)
			}
		}
		var out []fga.Resource
		for _, l := range lists {
			gv, err := schema.ParseGroupVersion(l.GroupVersion)
			if err != nil || builtinGroups[gv.Group] || strings.HasSuffix(gv.Group, ".kcp.io") {
				continue
			}
			for _, r := range l.APIResources {
				if strings.Contains(r.Name, "/") {
					continue
				}
				// Kubernetes' default singular is the lower-cased kind (the
				// core's discovery leaves singularName empty for bound APIs).
				singular := r.SingularName
				if singular == "" {
					singular = strings.ToLower(r.Kind)
				}
				if singular == "" {
					continue
				}
				out = append(out, fga.Resource{Group: gv.Group, Plural: r.Name, Singular: singular, Namespaced: r.Namespaced})
			}
		}
		sort.Slice(out, func(i, j int) bool { return out[i].ModuleName() < out[j].ModuleName() })
		return out, complete, nil
	}
}
