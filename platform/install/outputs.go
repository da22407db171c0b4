package install

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/meshplane/meshplane/sdk/platformenv"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/clientcmd"
)

// The charts' contract with this command.
const (
	// AdminKubeconfigKey is the key of the admin kubeconfig Secret
	// (<release>-admin-kubeconfig) holding the kubeconfig, its server the
	// in-cluster URL of the core (or of the front proxy with shards).
	AdminKubeconfigKey = "kubeconfig"
	// EnvAnnotation on a Service of the release names the platform.env
	// variable of its URL (CORE_URL, GRAPHQL_URL, ...), as `make run` writes them.
	EnvAnnotation = "platform.meshplane.io/env"
	// PortAnnotation names the Service port of that URL (default: the first).
	PortAnnotation = "platform.meshplane.io/port"
	// SchemeAnnotation is the URL's scheme (default https).
	SchemeAnnotation = "platform.meshplane.io/scheme"
	// PathAnnotation is appended to the URL (e.g. /authz).
	PathAnnotation = "platform.meshplane.io/path"
)

// AdminKubeconfigFile is the admin kubeconfig's name in --output-dir.
const AdminKubeconfigFile = "admin.kubeconfig"

// outputs is what the install leaves for the user.
type outputs struct {
	dir string
	env []platformenv.Entry
	// via says how each variable's URL reaches its Service.
	via map[string]string
	// forwards are the port-forward commands ClusterIP URLs need.
	forwards []string
	notes    []string
}

// writeOutputs writes the admin kubeconfig (servers rewritten to addresses
// this machine reaches) and platform.env into o.OutputDir.
func (o *Options) writeOutputs(ctx context.Context, c *cluster) (*outputs, error) {
	dir, err := filepath.Abs(o.OutputDir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	out := &outputs{dir: dir, via: map[string]string{}}
	kubeconfig := filepath.Join(dir, AdminKubeconfigFile)
	coreURL, err := o.writeAdminKubeconfig(ctx, c, kubeconfig, out)
	if err != nil {
		return nil, err
	}
	urls, err := o.serviceURLs(ctx, c, out)
	if err != nil {
		return nil, err
	}
	if _, ok := urls["CORE_URL"]; !ok && coreURL != "" {
		urls["CORE_URL"] = coreURL
	}
	if coreURL != "" {
		out.env = append(out.env, platformenv.Entry{Key: "KUBECONFIG", Value: kubeconfig})
	}
	for _, k := range envOrder(urls) {
		out.env = append(out.env, platformenv.Entry{Key: k, Value: urls[k]})
	}
	if err := platformenv.Write(filepath.Join(dir, platformenv.FileName), out.env); err != nil {
		return nil, err
	}
	return out, nil
}

// envOrder is CORE_URL first, then the rest by name.
func envOrder(urls map[string]string) []string {
	keys := make([]string, 0, len(urls))
	for k := range urls {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		switch {
		case a == b:
			return 0
		case a == "CORE_URL":
			return -1
		case b == "CORE_URL":
			return 1
		}
		return strings.Compare(a, b)
	})
	return keys
}

// writeAdminKubeconfig copies the admin kubeconfig out of its Secret, each
// cluster's in-cluster server replaced by an address reached from here (the
// in-cluster host name kept as tls-server-name, so the serving certificate
// still verifies). It returns the core's URL (the first server's origin),
// "" when the Secret does not exist (noted in out).
func (o *Options) writeAdminKubeconfig(ctx context.Context, c *cluster, path string, out *outputs) (string, error) {
	name := o.adminSecretName()
	secret, err := c.client.CoreV1().Secrets(o.Namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		out.notes = append(out.notes, fmt.Sprintf("no Secret %s/%s: no admin kubeconfig written", o.Namespace, name))
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("reading the admin kubeconfig Secret: %w", err)
	}
	raw, ok := secret.Data[AdminKubeconfigKey]
	if !ok {
		return "", fmt.Errorf("Secret %s/%s has no key %q", o.Namespace, name, AdminKubeconfigKey)
	}
	cfg, err := clientcmd.Load(raw)
	if err != nil {
		return "", fmt.Errorf("Secret %s/%s: %w", o.Namespace, name, err)
	}
	var coreURL, currentCluster string
	if cur := cfg.Contexts[cfg.CurrentContext]; cur != nil {
		currentCluster = cur.Cluster
	}
	clusters := make([]string, 0, len(cfg.Clusters))
	for n := range cfg.Clusters {
		clusters = append(clusters, n)
	}
	slices.Sort(clusters)
	for _, n := range clusters {
		cl := cfg.Clusters[n]
		u, err := url.Parse(cl.Server)
		if err != nil {
			return "", fmt.Errorf("Secret %s/%s: cluster %s: %w", o.Namespace, name, n, err)
		}
		if ep, ok, err := o.reachHost(ctx, c, u); err != nil {
			return "", err
		} else if ok && ep.Via == viaClusterIP {
			// Reached from inside the cluster only: the server stays as it is.
			out.forwards = append(out.forwards, ep.Forward)
			if n == currentCluster || coreURL == "" {
				out.via["KUBECONFIG"], out.via["CORE_URL"] = ep.Via, ep.Via
			}
		} else if ok {
			if cl.TLSServerName == "" {
				cl.TLSServerName = u.Hostname()
			}
			u.Host = ep.HostPort
			cl.Server = u.String()
			if ep.Forward != "" {
				out.forwards = append(out.forwards, ep.Forward)
			}
			if n == currentCluster || coreURL == "" {
				out.via["KUBECONFIG"], out.via["CORE_URL"] = ep.Via, ep.Via
			}
		}
		if n == currentCluster || coreURL == "" {
			coreURL = (&url.URL{Scheme: u.Scheme, Host: u.Host}).String()
		}
	}
	b, err := clientcmd.Write(*cfg)
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return "", err
	}
	return coreURL, nil
}

// reachHost maps the in-cluster host of u to an endpoint reached from here;
// false when u's host is no Service of the cluster (kept as it is).
func (o *Options) reachHost(ctx context.Context, c *cluster, u *url.URL) (endpoint, bool, error) {
	svcName, ns := serviceOfHost(u.Hostname(), o.Namespace)
	if svcName == "" {
		return endpoint{}, false, nil
	}
	svc, err := c.client.CoreV1().Services(ns).Get(ctx, svcName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return endpoint{}, false, nil
	}
	if err != nil {
		return endpoint{}, false, err
	}
	port := 443
	if p := u.Port(); p != "" {
		port, _ = strconv.Atoi(p)
	}
	sp, ok := servicePort(svc, "", port)
	if !ok {
		return endpoint{}, false, fmt.Errorf("Service %s/%s has no port %d (the admin kubeconfig's server %s)", ns, svcName, port, u)
	}
	ep, err := reach(ctx, c.client, svc, sp, o.NodeAddress, c.forwarder)
	return ep, err == nil, err
}

// serviceURLs is the URL of every Service of the release that names its
// platform.env variable (EnvAnnotation).
func (o *Options) serviceURLs(ctx context.Context, c *cluster, out *outputs) (map[string]string, error) {
	svcs, err := c.client.CoreV1().Services(o.Namespace).List(ctx, metav1.ListOptions{
		LabelSelector: labels.SelectorFromSet(labels.Set{InstanceLabel: o.ReleaseName}).String(),
	})
	if err != nil {
		return nil, fmt.Errorf("listing the release's Services: %w", err)
	}
	urls := map[string]string{}
	for i := range svcs.Items {
		svc := &svcs.Items[i]
		key := svc.Annotations[EnvAnnotation]
		if key == "" {
			continue
		}
		u, ep, err := o.serviceURL(ctx, c, svc)
		if err != nil {
			return nil, err
		}
		urls[key] = u
		out.via[key] = ep.Via
		if ep.Forward != "" {
			out.forwards = append(out.forwards, ep.Forward)
		}
	}
	return urls, nil
}

func (o *Options) serviceURL(ctx context.Context, c *cluster, svc *corev1.Service) (string, endpoint, error) {
	portName := svc.Annotations[PortAnnotation]
	sp, ok := servicePort(svc, portName, 0)
	if !ok {
		return "", endpoint{}, fmt.Errorf("Service %s/%s: no port %q (annotation %s)", svc.Namespace, svc.Name, portName, PortAnnotation)
	}
	ep, err := reach(ctx, c.client, svc, sp, o.NodeAddress, c.forwarder)
	if err != nil {
		return "", endpoint{}, err
	}
	scheme := svc.Annotations[SchemeAnnotation]
	if scheme == "" {
		scheme = "https"
	}
	return scheme + "://" + ep.HostPort + svc.Annotations[PathAnnotation], ep, nil
}

// print tells the user where things are and how to reach them.
func (out *outputs) print(w interface{ Write([]byte) (int, error) }, envFile string) {
	fmt.Fprintf(w, "%s:\n", envFile)
	for _, e := range out.env {
		line := fmt.Sprintf("  %s=%s", e.Key, e.Value)
		if v := out.via[e.Key]; v != "" {
			line += "   # " + via(v)
		}
		fmt.Fprintln(w, line)
	}
	for _, n := range out.notes {
		fmt.Fprintln(w, "note:", n)
	}
	if len(out.forwards) > 0 {
		fmt.Fprintln(w, "ClusterIP Services are reached from inside the cluster only. From this machine, run the same")
		fmt.Fprintln(w, "install again with --port-forward (it changes nothing, forwards local ports while it runs and")
		fmt.Fprintln(w, "writes their URLs), or install with the Services as NodePort or LoadBalancer; or forward by hand")
		fmt.Fprintln(w, "(then use 127.0.0.1:<port>, kubectl with --tls-server-name <the in-cluster host>):")
		for _, f := range slices.Compact(slices.Sorted(slices.Values(out.forwards))) {
			fmt.Fprintln(w, "  "+f)
		}
	}
	for _, e := range out.env {
		if e.Key == "KUBECONFIG" {
			fmt.Fprintln(w, "try:")
			fmt.Fprintf(w, "  export KUBECONFIG=%s\n", e.Value)
			fmt.Fprintln(w, "  kubectl get workspaces")
		}
	}
}

func via(v string) string {
	switch v {
	case viaLoadBalancer:
		return "the Service's load balancer"
	case viaNodePort:
		return "a node's address and the Service's NodePort"
	case viaPortForward:
		return "forwarded through the API server while this command runs"
	}
	return "in-cluster only (ClusterIP): see port-forward below"
}
