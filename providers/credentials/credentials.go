// Package credentials gives a provider exactly the rights its APIExport
// needs, and writes the kubeconfig it runs with.
//
// The rights (ClusterRole in the provider workspace) reach the export's
// content and nothing else: the export itself (get, list, watch), its
// content (apiexports/content, every verb: the exported resources and the
// accepted claims of every consumer, through the APIExport virtual
// workspace, where the export's and the bindings' claims decide), its
// endpoint slices (read), verb "access" on the provider workspace (kcp's
// workspace content authorization) and the discovery paths. No rights on
// the exported or claimed resources are granted in the provider workspace
// itself: there a provider's token reads no Secret (the export's identity
// key among them), WorkspaceType or Namespace. They are bound to a
// ServiceAccount in the provider workspace, whose token goes into the
// kubeconfig (TokenRequest), or to a static-token user.
package credentials

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	apisv1alpha2 "github.com/kcp-dev/sdk/apis/apis/v1alpha2"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// RoleName is the ClusterRole (and ClusterRoleBinding) made for an export.
func RoleName(export string) string { return "meshplane:provider:" + export }

// ClusterRole returns the rights a provider of export needs; slices are
// the endpoint slices it follows (usually one named after the export).
// Everything it does in the consumers goes through the virtual workspace,
// so the exported and claimed resources get no rule here.
func ClusterRole(export *apisv1alpha2.APIExport, sliceNames ...string) *rbacv1.ClusterRole {
	group := apisv1alpha2.SchemeGroupVersion.Group
	return &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: RoleName(export.Name)},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{group}, Resources: []string{"apiexports"}, ResourceNames: []string{export.Name}, Verbs: []string{"get", "list", "watch"}},
			{APIGroups: []string{group}, Resources: []string{"apiexports/content"}, ResourceNames: []string{export.Name}, Verbs: []string{"*"}},
			{APIGroups: []string{group}, Resources: []string{"apiexportendpointslices"}, ResourceNames: slices.Clone(sliceNames), Verbs: []string{"get", "list", "watch"}},
			// kcp's workspace content access: needed to be authorized in
			// the provider workspace at all (its RBAC is only consulted
			// after it).
			{NonResourceURLs: []string{"/"}, Verbs: []string{"access"}},
			{NonResourceURLs: []string{"/api", "/api/*", "/apis", "/apis/*", "/version"}, Verbs: []string{"get"}},
		},
	}
}

// Subject is who gets the rights: a ServiceAccount (Namespace set) or a
// user.
type Subject struct {
	Namespace, Name string
}

func (s Subject) rbac() rbacv1.Subject {
	if s.Namespace != "" {
		return rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: s.Namespace, Name: s.Name}
	}
	return rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: s.Name}
}

// Grant creates or updates, in the provider workspace c talks to, the
// ClusterRole for export and a ClusterRoleBinding of it to subject (and
// the ServiceAccount itself when subject is one).
func Grant(ctx context.Context, c client.Client, export *apisv1alpha2.APIExport, slice string, subject Subject) error {
	if subject.Namespace != "" {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: subject.Namespace}}
		if err := c.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("namespace %s: %w", subject.Namespace, err)
		}
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: subject.Namespace, Name: subject.Name}}
		if err := c.Create(ctx, sa); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("service account %s/%s: %w", subject.Namespace, subject.Name, err)
		}
	}
	want := ClusterRole(export, slice)
	role := &rbacv1.ClusterRole{}
	switch err := c.Get(ctx, client.ObjectKey{Name: want.Name}, role); {
	case apierrors.IsNotFound(err):
		if err := c.Create(ctx, want); err != nil {
			return fmt.Errorf("cluster role %s: %w", want.Name, err)
		}
	case err != nil:
		return fmt.Errorf("cluster role %s: %w", want.Name, err)
	default:
		role.Rules = want.Rules
		if err := c.Update(ctx, role); err != nil {
			return fmt.Errorf("cluster role %s: %w", want.Name, err)
		}
	}
	binding := &rbacv1.ClusterRoleBinding{}
	subj := subject.rbac()
	switch err := c.Get(ctx, client.ObjectKey{Name: want.Name}, binding); {
	case apierrors.IsNotFound(err):
		binding = &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: want.Name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: want.Name},
			Subjects:   []rbacv1.Subject{subj},
		}
		if err := c.Create(ctx, binding); err != nil {
			return fmt.Errorf("cluster role binding %s: %w", want.Name, err)
		}
	case err != nil:
		return fmt.Errorf("cluster role binding %s: %w", want.Name, err)
	default:
		if !slices.Contains(binding.Subjects, subj) {
			binding.Subjects = append(binding.Subjects, subj)
			if err := c.Update(ctx, binding); err != nil {
				return fmt.Errorf("cluster role binding %s: %w", want.Name, err)
			}
		}
	}
	return nil
}

// ErrNoTokenRequest says the server does not serve TokenRequest
// (serviceaccounts/<name>/token).
var ErrNoTokenRequest = errors.New("the server does not issue ServiceAccount tokens (TokenRequest, POST serviceaccounts/<name>/token, is not served)")

// Token asks for a token of the ServiceAccount, valid for ttl.
func Token(ctx context.Context, cfg *rest.Config, namespace, name string, ttl time.Duration) (string, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return "", err
	}
	tr, err := cs.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(ttl.Seconds()))},
	}, metav1.CreateOptions{})
	if err != nil {
		if apierrors.IsNotFound(err) && !strings.Contains(err.Error(), "serviceaccounts \""+name+"\" not found") ||
			apierrors.IsMethodNotSupported(err) {
			return "", fmt.Errorf("%w: %v", ErrNoTokenRequest, err)
		}
		return "", fmt.Errorf("token for service account %s/%s: %w", namespace, name, err)
	}
	return tr.Status.Token, nil
}

// Kubeconfig returns a kubeconfig with one context, "provider", for server
// (the virtual workspace URL), trusting what cfg trusts. With a token it
// authenticates with it; without, with cfg's own credentials.
func Kubeconfig(cfg *rest.Config, server, token string) (*clientcmdapi.Config, error) {
	cluster := &clientcmdapi.Cluster{Server: server, InsecureSkipTLSVerify: cfg.Insecure, TLSServerName: cfg.ServerName}
	if len(cfg.CAData) > 0 {
		cluster.CertificateAuthorityData = cfg.CAData
	} else if cfg.CAFile != "" {
		data, err := os.ReadFile(cfg.CAFile)
		if err != nil {
			return nil, fmt.Errorf("reading CA %s: %w", cfg.CAFile, err)
		}
		cluster.CertificateAuthorityData = data
	}
	auth := &clientcmdapi.AuthInfo{}
	switch {
	case token != "":
		auth.Token = token
	case cfg.BearerToken != "":
		auth.Token = cfg.BearerToken
	case cfg.BearerTokenFile != "":
		auth.TokenFile = cfg.BearerTokenFile
	default:
		auth.ClientCertificateData, auth.ClientKeyData = cfg.CertData, cfg.KeyData
		auth.ClientCertificate, auth.ClientKey = cfg.CertFile, cfg.KeyFile
		auth.Username, auth.Password = cfg.Username, cfg.Password
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters["provider"] = cluster
	kc.AuthInfos["provider"] = auth
	kc.Contexts["provider"] = &clientcmdapi.Context{Cluster: "provider", AuthInfo: "provider"}
	kc.CurrentContext = "provider"
	return kc, nil
}
