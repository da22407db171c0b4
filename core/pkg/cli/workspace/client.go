package workspace

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"

	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
)

// logicalClusterName is the name of the singleton LogicalCluster object that
// exists in every workspace.
const logicalClusterName = "cluster"

// client talks to the few kcp endpoints the plugin needs. Every call names the
// workspace path it is addressed to; requests go to <base>/clusters/<path>/...
type client struct {
	rest *rest.RESTClient
	base *url.URL
}

var codecs = func() serializer.CodecFactory {
	scheme := runtime.NewScheme()
	// metav1.Status & co. in "v1", for decoding error responses.
	metav1.AddToGroupVersion(scheme, schema.GroupVersion{Version: "v1"})
	_ = tenancyv1alpha1.AddToScheme(scheme)
	_ = corev1alpha1.AddToScheme(scheme)
	return serializer.NewCodecFactory(scheme)
}()

// newClient builds a client from the rest config of the kubeconfig in use
// (TLS, credentials, proxy, timeouts). base is the server URL without the
// /clusters/<path> suffix.
func newClient(cfg *rest.Config, base *url.URL) (*client, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.Host = base.String()
	cfg.APIPath = ""
	cfg.GroupVersion = &tenancyv1alpha1.SchemeGroupVersion
	cfg.NegotiatedSerializer = codecs.WithoutConversion()
	cfg.ContentType = runtime.ContentTypeJSON
	cfg.AcceptContentTypes = runtime.ContentTypeJSON
	if cfg.UserAgent == "" {
		cfg.UserAgent = "kubectl-ws " + rest.DefaultKubernetesUserAgent()
	}
	rc, err := rest.RESTClientFor(cfg)
	if err != nil {
		return nil, err
	}
	return &client{rest: rc, base: base}, nil
}

func workspacesPath(clusterPath string, name ...string) string {
	segs := append([]string{"/clusters", clusterPath, "apis", tenancyv1alpha1.SchemeGroupVersion.Group, tenancyv1alpha1.SchemeGroupVersion.Version, "workspaces"}, name...)
	return strings.Join(segs, "/")
}

// decodeInto decodes a successful response into into. Error responses become
// *apierrors.StatusError carrying the server's Status (code, reason, message).
// The body is decoded as plain JSON so that responses without apiVersion/kind
// are accepted too.
func decodeInto(res rest.Result, into any) error {
	if err := res.Error(); err != nil {
		return err
	}
	body, err := res.Raw()
	if err != nil {
		return err
	}
	if err := json.Unmarshal(body, into); err != nil {
		return fmt.Errorf("decoding server response: %w", err)
	}
	return nil
}

// getWorkspace gets the Workspace name in the workspace parent.
func (c *client) getWorkspace(ctx context.Context, parent, name string) (*tenancyv1alpha1.Workspace, error) {
	ws := &tenancyv1alpha1.Workspace{}
	return ws, decodeInto(c.rest.Get().AbsPath(workspacesPath(parent, name)).Do(ctx), ws)
}

// getHomeOnce gets the caller's home Workspace ("~" in root) without client-go's
// own retries, so that the caller controls how 429s are waited for.
func (c *client) getHomeOnce(ctx context.Context) (*tenancyv1alpha1.Workspace, error) {
	ws := &tenancyv1alpha1.Workspace{}
	return ws, decodeInto(c.rest.Get().AbsPath(workspacesPath(rootPath, "~")).MaxRetries(0).Do(ctx), ws)
}

// listWorkspaces lists the child Workspaces of the workspace p.
func (c *client) listWorkspaces(ctx context.Context, p string) (*tenancyv1alpha1.WorkspaceList, error) {
	list := &tenancyv1alpha1.WorkspaceList{}
	return list, decodeInto(c.rest.Get().AbsPath(workspacesPath(p)).Do(ctx), list)
}

// createWorkspace creates ws in the workspace parent.
func (c *client) createWorkspace(ctx context.Context, parent string, ws *tenancyv1alpha1.Workspace) (*tenancyv1alpha1.Workspace, error) {
	ws = ws.DeepCopy()
	ws.APIVersion = tenancyv1alpha1.SchemeGroupVersion.String()
	ws.Kind = "Workspace"
	data, err := json.Marshal(ws)
	if err != nil {
		return nil, err
	}
	out := &tenancyv1alpha1.Workspace{}
	return out, decodeInto(c.rest.Post().AbsPath(workspacesPath(parent)).SetHeader("Content-Type", runtime.ContentTypeJSON).Body(data).Do(ctx), out)
}

// getLogicalCluster gets the LogicalCluster of the workspace p; this is how the
// plugin checks that p exists and that the caller may access it.
func (c *client) getLogicalCluster(ctx context.Context, p string) (*corev1alpha1.LogicalCluster, error) {
	lc := &corev1alpha1.LogicalCluster{}
	gv := corev1alpha1.SchemeGroupVersion
	abs := strings.Join([]string{"/clusters", p, "apis", gv.Group, gv.Version, "logicalclusters", logicalClusterName}, "/")
	return lc, decodeInto(c.rest.Get().AbsPath(abs).Do(ctx), lc)
}
