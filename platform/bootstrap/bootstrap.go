// Package bootstrap puts the objects the platform needs into a running
// core: the workspace types of the account tree, the provider workspace
// root:platform-mesh-system exporting core.platform-mesh.io, and the
// workspace root:orgs with its access rules and its binding to that
// export. It is idempotent (objects are created, or patched where they
// differ from the manifests), so every start runs it and a restart changes
// nothing.
package bootstrap

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/yaml"

	apiconfig "github.com/meshplane/meshplane/apis/config"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// FieldManager owns every field the bootstrap writes.
const FieldManager = "meshplane-bootstrap"

//go:embed manifests
var manifests embed.FS

// step applies objects into one workspace, after waiting for that
// workspace to be Ready.
type step struct {
	// path is the workspace; parent and name its Workspace object (empty
	// for root).
	path, parent, name string
	objects            func() ([]*unstructured.Unstructured, error)
	// bindings are APIBindings the step waits to be Bound.
	bindings []string
}

var steps = []step{
	{path: "root", objects: folder("root")},
	{path: "root:platform-mesh-system", parent: "root", name: "platform-mesh-system", objects: platformMeshExport},
	{path: "root:orgs", parent: "root", name: "orgs", objects: folder("orgs"), bindings: []string{apiconfig.ExportName}},
}

// platformMeshExport is the core.platform-mesh.io API: its schemas, the
// export, and the admission policies of its Accounts.
func platformMeshExport() ([]*unstructured.Unstructured, error) {
	schemas, err := apiconfig.APIResourceSchemas()
	if err != nil {
		return nil, err
	}
	export, err := apiconfig.APIExport()
	if err != nil {
		return nil, err
	}
	admission, err := folder("platform-mesh-system")()
	if err != nil {
		return nil, err
	}
	return append(append(schemas, export), admission...), nil
}

var (
	workspacesGVR  = schema.GroupVersionResource{Group: "tenancy.kcp.io", Version: "v1alpha1", Resource: "workspaces"}
	apiBindingsGVR = schema.GroupVersionResource{Group: "apis.kcp.io", Version: "v1alpha2", Resource: "apibindings"}
)

// Run applies every step with admin credentials; base is a rest.Config for
// the core's base URL (no /clusters path).
func Run(ctx context.Context, base *rest.Config) error {
	for _, s := range steps {
		if s.name != "" {
			if err := waitWorkspaceReady(ctx, base, s.parent, s.name); err != nil {
				return err
			}
		}
		objs, err := s.objects()
		if err != nil {
			return err
		}
		cfg := clusterConfig(base, s.path)
		if err := apply(ctx, cfg, objs); err != nil {
			return fmt.Errorf("bootstrapping %s: %w", s.path, err)
		}
		for _, b := range s.bindings {
			if err := waitBound(ctx, cfg, b); err != nil {
				return fmt.Errorf("bootstrapping %s: %w", s.path, err)
			}
		}
	}
	return applySystemOnly(ctx, base)
}

// PlatformMeshSystemClusterVar in the system-only manifests is replaced by
// the logical cluster of root:platform-mesh-system, where the operators'
// ServiceAccounts live.
const PlatformMeshSystemClusterVar = "${PLATFORM_MESH_SYSTEM_CLUSTER}"

// OrgsClusterVar in the system-only manifests is replaced by the logical
// cluster of root:orgs, the only workspace where organizations live.
const OrgsClusterVar = "${ORGS_CLUSTER}"

// applySystemOnly applies the admission that needs the logical clusters
// of the platform's workspaces (AccountInfo written by the platform only,
// organizations in root:orgs only), into root:platform-mesh-system
// (policies of an export apply in every workspace that binds it).
func applySystemOnly(ctx context.Context, base *rest.Config) error {
	dyn, err := dynamic.NewForConfig(clusterConfig(base, "root"))
	if err != nil {
		return err
	}
	clusterOf := func(name string) (string, error) {
		ws, err := dyn.Resource(workspacesGVR).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return "", fmt.Errorf("reading Workspace %s: %w", name, err)
		}
		cluster, _, _ := unstructured.NestedString(ws.Object, "spec", "cluster")
		if cluster == "" {
			return "", fmt.Errorf("Workspace %s has no logical cluster", name)
		}
		return cluster, nil
	}
	cluster, err := clusterOf("platform-mesh-system")
	if err != nil {
		return err
	}
	orgs, err := clusterOf("orgs")
	if err != nil {
		return err
	}
	objs, err := SystemOnlyObjects(cluster, orgs)
	if err != nil {
		return err
	}
	if err := apply(ctx, clusterConfig(base, "root:platform-mesh-system"), objs); err != nil {
		return fmt.Errorf("bootstrapping root:platform-mesh-system: %w", err)
	}
	return nil
}

// SystemOnlyObjects returns the system-only admission objects for the
// operators' cluster and root:orgs' cluster.
func SystemOnlyObjects(cluster, orgsCluster string) ([]*unstructured.Unstructured, error) {
	sub, err := fs.Sub(manifests, "manifests/system-only")
	if err != nil {
		return nil, err
	}
	return readObjects(replacing{sub, strings.NewReplacer(PlatformMeshSystemClusterVar, cluster, OrgsClusterVar, orgsCluster)}, ".")
}

// replacing is an fs.FS whose files are rewritten by r.
type replacing struct {
	fs.FS
	r *strings.Replacer
}

func (r replacing) ReadFile(name string) ([]byte, error) {
	data, err := fs.ReadFile(r.FS, name)
	if err != nil {
		return nil, err
	}
	return []byte(r.r.Replace(string(data))), nil
}

func (r replacing) ReadDir(name string) ([]fs.DirEntry, error) { return fs.ReadDir(r.FS, name) }

func clusterConfig(base *rest.Config, path string) *rest.Config {
	c := rest.CopyConfig(base)
	c.Host = strings.TrimSuffix(base.Host, "/") + "/clusters/" + path
	return c
}

// apply server-side applies the objects in order.
func apply(ctx context.Context, cfg *rest.Config, objs []*unstructured.Unstructured) error {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	groups, err := restmapper.GetAPIGroupResources(dc)
	if err != nil {
		return fmt.Errorf("discovery: %w", err)
	}
	mapper := restmapper.NewDiscoveryRESTMapper(groups)
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	for _, obj := range objs {
		gvk := obj.GroupVersionKind()
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			return fmt.Errorf("%s %s: %w", gvk.Kind, obj.GetName(), err)
		}
		// The core's indexes (workspace types, RBAC) follow writes within
		// moments: an object that refers to one applied just before may be
		// refused once, so retry for a while before giving up.
		client := dyn.Resource(m.Resource).Namespace(obj.GetNamespace())
		var last error
		err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			last = ensure(ctx, client, obj)
			return last == nil, nil
		})
		if err != nil {
			return fmt.Errorf("applying %s %s: %w (%v)", gvk.Kind, obj.GetName(), last, err)
		}
	}
	return nil
}

// ensure server-side applies obj with the bootstrap's field manager
// (forcing ownership of the fields it sets). An apply that changes nothing
// writes nothing, so a restart changes nothing.
func ensure(ctx context.Context, client dynamic.ResourceInterface, obj *unstructured.Unstructured) error {
	_, err := client.Apply(ctx, obj.GetName(), obj, metav1.ApplyOptions{FieldManager: FieldManager, Force: true})
	return err
}

// folder reads the embedded manifests/<name>.
func folder(name string) func() ([]*unstructured.Unstructured, error) {
	return func() ([]*unstructured.Unstructured, error) {
		return readObjects(manifests, path.Join("manifests", name))
	}
}

// ApplyDir applies (as Run does) every YAML document of the files in dir
// on disk, in name order, in the workspace path; base points at the core's
// base URL. It is how other set-ups (the launcher's example providers)
// put their manifests in.
func ApplyDir(ctx context.Context, base *rest.Config, workspace, dir string) error {
	objs, err := readObjects(os.DirFS(dir), ".")
	if err != nil {
		return fmt.Errorf("reading %s: %w", dir, err)
	}
	return apply(ctx, clusterConfig(base, workspace), objs)
}

// ApplyObjects applies objs in the workspace path and, for each name in
// bindings (APIBindings among them), waits until it is Bound.
func ApplyObjects(ctx context.Context, base *rest.Config, workspace string, objs []*unstructured.Unstructured, bindings ...string) error {
	cfg := clusterConfig(base, workspace)
	if err := apply(ctx, cfg, objs); err != nil {
		return err
	}
	for _, b := range bindings {
		if err := waitBound(ctx, cfg, b); err != nil {
			return err
		}
	}
	return nil
}

// WaitWorkspaceReady waits until the Workspace name in parent is Ready.
func WaitWorkspaceReady(ctx context.Context, base *rest.Config, parent, name string) error {
	return waitWorkspaceReady(ctx, base, parent, name)
}

// readObjects parses every YAML document of the .yaml files of the folder,
// files in name order (numbered so that what others refer to comes first).
func readObjects(fsys fs.FS, dir string) ([]*unstructured.Unstructured, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, err
	}
	var objs []*unstructured.Unstructured
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".yaml") {
			continue
		}
		data, err := fs.ReadFile(fsys, path.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		for i, doc := range strings.Split(string(data), "\n---\n") {
			obj := &unstructured.Unstructured{}
			if err := yaml.Unmarshal([]byte(doc), &obj.Object); err != nil {
				return nil, fmt.Errorf("%s document %d: %w", e.Name(), i+1, err)
			}
			if len(obj.Object) == 0 {
				continue
			}
			objs = append(objs, obj)
		}
	}
	return objs, nil
}

// waitWorkspaceReady waits until the Workspace name in parent is Ready.
func waitWorkspaceReady(ctx context.Context, base *rest.Config, parent, name string) error {
	return waitPhase(ctx, clusterConfig(base, parent), workspacesGVR, name, "Ready")
}

// waitBound waits until the APIBinding name is Bound.
func waitBound(ctx context.Context, cfg *rest.Config, name string) error {
	return waitPhase(ctx, cfg, apiBindingsGVR, name, "Bound")
}

// waitPhase waits until status.phase of the object is want.
func waitPhase(ctx context.Context, cfg *rest.Config, gvr schema.GroupVersionResource, name, want string) error {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	var phase string
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		obj, err := dyn.Resource(gvr).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			phase = err.Error()
			return false, nil
		}
		phase, _, _ = unstructured.NestedString(obj.Object, "status", "phase")
		return phase == want, nil
	})
	if err != nil {
		return fmt.Errorf("%s %s in %s not %s (last: %s): %w", gvr.Resource, name, cfg.Host, want, phase, err)
	}
	return nil
}
