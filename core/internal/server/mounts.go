package server

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"path/filepath"
	"strconv"

	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	genericapiserver "k8s.io/apiserver/pkg/server"

	builtinapi "github.com/meshplane/meshplane/core/internal/apis/builtin"
	"github.com/meshplane/meshplane/core/internal/certs"
	"github.com/meshplane/meshplane/core/internal/controllers/workspacemount"
	"github.com/meshplane/meshplane/core/internal/crd"
	"github.com/meshplane/meshplane/core/internal/handlerchain"
	"github.com/meshplane/meshplane/core/internal/mounts"
	"github.com/meshplane/meshplane/core/internal/registry/wildcard"
	"github.com/meshplane/meshplane/core/internal/server/options"
	"github.com/meshplane/meshplane/sdk/egress"
)

// mountParts are the pieces of workspace mounts, nil while the
// WorkspaceMounts gate is off.
type mountParts struct {
	workspaces *mounts.Workspaces
	objects    *mounts.Objects
	handler    *mounts.Handler
	controller *workspacemount.Controller
}

// newMounts builds the mount index, watches and proxy when the gate is on.
func (p *parts) newMounts() error {
	opts := p.config.Options
	if !workspaceMountsEnabled(opts.FeatureGates) {
		return nil
	}
	certFile, keyFile, err := certs.EnsureMountClient(opts.RootDirectory)
	if err != nil {
		return err
	}
	cas := append([]string{}, opts.MountCAFiles...)
	if p.config.CAFile != "" {
		cas = append(cas, p.config.CAFile)
	}
	for i := range cas {
		if cas[i], err = filepath.Abs(cas[i]); err != nil {
			return err
		}
	}
	allow, err := egress.ParseAllowList("--mount-allowed-hosts", opts.MountAllowedHosts)
	if err != nil {
		return err
	}
	reserved, err := egress.ParseReserved("--mount-reserved-addresses", opts.MountReservedAddresses)
	if err != nil {
		return err
	}
	allow.Reserved = append(ownAddresses(opts), reserved...)
	transport, err := mounts.NewTransport(mounts.TransportOptions{CAFiles: cas, ClientCertFile: certFile, ClientKeyFile: keyFile, Allow: allow})
	if err != nil {
		return err
	}
	m := &mountParts{workspaces: mounts.NewWorkspaces()}
	m.objects = mounts.NewObjects(p.mountType, func(k mounts.ObjectKey) {
		if m.controller != nil {
			m.controller.ObjectChanged(k)
		}
	})
	m.handler = &mounts.Handler{Resolve: p.index.Resolve, Workspaces: m.workspaces, State: m.objects.State,
		Transport: transport, Codecs: builtinapi.Codecs}
	p.mounts = m
	return nil
}

// mountType resolves the kind of a mount reference among the custom and
// bound resources of a cluster.
func (p *parts) mountType(cluster string, gvk schema.GroupVersionKind) (mounts.Type, error) {
	for _, c := range p.crdIndex.List(cluster) {
		if c.Spec.Group != gvk.Group || c.Spec.Names.Kind != gvk.Kind {
			continue
		}
		for _, v := range c.Spec.Versions {
			if v.Name == gvk.Version && v.Served {
				return mounts.Type{ID: crd.StoragePrefix(c), Storage: func() (wildcard.Storage, error) { return p.crdHandler.Registry(c) }}, nil
			}
		}
		return mounts.Type{}, fmt.Errorf("version %s of %s is not served", gvk.Version, gvk.GroupKind())
	}
	return mounts.Type{}, fmt.Errorf("no resource of kind %s is served in the workspace", gvk.GroupKind())
}

// mountAdmission refuses mounts while the gate is off.
func (p *parts) mountAdmission() []admission.Interface {
	if p.mounts != nil {
		return nil
	}
	return []admission.Interface{mounts.NewDisabled()}
}

// withMounts sends requests to mounted workspaces through their own copy
// of the generic chain (authentication, audit, impersonation, limits),
// whose authorizer asks in the parent workspace (mounts.Authorizer), to
// the mount proxy.
func (p *parts) withMounts(chain http.Handler, c *genericapiserver.Config) http.Handler {
	if p.mounts == nil {
		return chain
	}
	mc := *c
	mc.Authorization.Authorizer = mounts.Authorizer{Next: c.Authorization.Authorizer}
	return p.mounts.handler.WithMounts(chain, handlerchain.Build(p.mounts.handler, &mc, p.signals))
}

// installWorkspaceMount makes mounted Workspaces follow their mount
// objects.
func (p *parts) installWorkspaceMount(inf informers) controller {
	if p.mounts == nil {
		return idle{}
	}
	workspaces := inf.of(p.reg.workspaces.Storage, &tenancyv1alpha1.Workspace{})
	wildcard.Mirror(workspaces, p.mounts.workspaces.Set)
	c := workspacemount.New(p.reg.workspaces, workspaces, p.mounts.workspaces, p.mounts.objects)
	p.mounts.controller = c
	p.crdIndex.OnChange(func(string) { c.Resync() })
	return c
}

// idle is a controller that has nothing to do.
type idle struct{}

func (idle) Run(context.Context) {}

// ownAddresses are the server's own listening addresses, which mounts may
// not reach unless --mount-allowed-hosts names them with their port: the
// secure port, the embedded etcd's ports, the external etcd servers and
// the shard's base URL.
func ownAddresses(opts *options.Completed) []netip.AddrPort {
	var out []netip.AddrPort
	add := func(host string, port int) {
		if port < 1 || port > 65535 {
			return
		}
		if ip, err := netip.ParseAddr(host); err == nil {
			out = append(out, netip.AddrPortFrom(ip.Unmap().WithZone(""), uint16(port)))
			return
		}
		ips, _ := net.LookupIP(host)
		for _, ip := range ips {
			if a, ok := netip.AddrFromSlice(ip); ok {
				out = append(out, netip.AddrPortFrom(a.Unmap(), uint16(port)))
			}
		}
	}
	addURL := func(raw string) {
		u, err := url.Parse(raw)
		if err != nil || u.Hostname() == "" {
			return
		}
		port, _ := strconv.Atoi(u.Port())
		if port == 0 {
			port = map[string]int{"http": 80, "https": 443}[u.Scheme]
		}
		add(u.Hostname(), port)
	}
	add(opts.BindAddress, opts.SecurePort)
	if len(opts.EtcdServers) == 0 {
		add("127.0.0.1", opts.EmbeddedEtcdClientPort)
		add("127.0.0.1", opts.EmbeddedEtcdPeerPort)
	}
	for _, s := range opts.EtcdServers {
		addURL(s)
	}
	addURL(opts.ShardBaseURL)
	return out
}
