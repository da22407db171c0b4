// Package bootstrap puts the objects the platform needs into a running
// core: the workspace types of the account tree and the workspace
// root:orgs with its access rules. It is idempotent (server-side apply with
// one field manager), so every start runs it and a restart changes nothing.
package bootstrap

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/yaml"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// FieldManager owns every field the bootstrap writes.
const FieldManager = "meshplane-bootstrap"

//go:embed manifests
var manifests embed.FS

// step applies the manifests of one folder into one workspace, after an
// optional wait for that workspace.
type step struct {
	folder string
	path   string
	// parentPath and name: the Workspace to wait for before applying (the
	// step's own workspace), empty for root.
	parent, name string
}

var steps = []step{
	{folder: "root", path: "root"},
	{folder: "orgs", path: "root:orgs", parent: "root", name: "orgs"},
}

var workspacesGVR = schema.GroupVersionResource{Group: "tenancy.kcp.io", Version: "v1alpha1", Resource: "workspaces"}

// Run applies every step with admin credentials; base is a rest.Config for
// the core's base URL (no /clusters path).
func Run(ctx context.Context, base *rest.Config) error {
	for _, s := range steps {
		if s.name != "" {
			if err := waitWorkspaceReady(ctx, base, s.parent, s.name); err != nil {
				return err
			}
		}
		if err := applyFolder(ctx, clusterConfig(base, s.path), s.folder); err != nil {
			return fmt.Errorf("bootstrapping %s: %w", s.path, err)
		}
	}
	return nil
}

func clusterConfig(base *rest.Config, path string) *rest.Config {
	c := rest.CopyConfig(base)
	c.Host = strings.TrimSuffix(base.Host, "/") + "/clusters/" + path
	return c
}

// applyFolder server-side applies every object of the folder's YAML files.
func applyFolder(ctx context.Context, cfg *rest.Config, folder string) error {
	objs, err := readObjects(path.Join("manifests", folder))
	if err != nil {
		return err
	}
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
		data, err := obj.MarshalJSON()
		if err != nil {
			return err
		}
		// The core's indexes (workspace types, RBAC) follow writes within
		// moments: an object that refers to one applied just before may be
		// refused once, so retry for a while before giving up.
		force := true
		var last error
		err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			_, last = dyn.Resource(m.Resource).Namespace(obj.GetNamespace()).Patch(ctx, obj.GetName(), types.ApplyPatchType, data,
				metav1.PatchOptions{FieldManager: FieldManager, Force: &force})
			return last == nil, nil
		})
		if err != nil {
			return fmt.Errorf("applying %s %s: %w (%v)", gvk.Kind, obj.GetName(), last, err)
		}
	}
	return nil
}

// readObjects parses every YAML document of the folder, files in name
// order (numbered so that what others refer to comes first).
func readObjects(dir string) ([]*unstructured.Unstructured, error) {
	entries, err := fs.ReadDir(manifests, dir)
	if err != nil {
		return nil, err
	}
	var objs []*unstructured.Unstructured
	for _, e := range entries {
		data, err := manifests.ReadFile(path.Join(dir, e.Name()))
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
	dyn, err := dynamic.NewForConfig(clusterConfig(base, parent))
	if err != nil {
		return err
	}
	var phase string
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		ws, err := dyn.Resource(workspacesGVR).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			phase = err.Error()
			return false, nil
		}
		phase, _, _ = unstructured.NestedString(ws.Object, "status", "phase")
		return phase == "Ready", nil
	})
	if err != nil {
		return fmt.Errorf("workspace %s:%s not Ready (last: %s): %w", parent, name, phase, err)
	}
	return nil
}
