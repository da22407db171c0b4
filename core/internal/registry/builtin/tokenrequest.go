package builtin

import (
	"context"
	"fmt"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/warning"

	"github.com/meshplane/meshplane/core/internal/clusters"
)

// Token lifetimes a TokenRequest may ask for, in seconds, as
// kube-apiserver allows. They are compared as seconds: a time.Duration of
// a tenant's expirationSeconds overflows beyond about 292 years.
const (
	defaultTokenExpirationSeconds = int64(time.Hour / time.Second)
	minTokenExpirationSeconds     = int64(10 * time.Minute / time.Second)
	maxTokenExpirationSeconds     = int64(1) << 32
)

// TokenBinding is what a bound token is minted for.
type TokenBinding struct {
	Cluster        string
	ServiceAccount *corev1.ServiceAccount
	// Secret is the object the token is bound to, if any.
	Secret     *corev1.Secret
	Audiences  []string
	Expiration time.Duration
}

// TokenMinter signs a bound service-account token; audiences empty means
// the API audiences, which it returns with the token.
type TokenMinter func(b TokenBinding) (token string, audiences []string, expires time.Time, err error)

// AddTokenRequest adds serviceaccounts/token (TokenRequest), answered
// with tokens mint signs. Tokens may be bound to a Secret; Pods and Nodes
// do not exist here. A longer lifetime than maxExpiration (when not 0) is
// shortened to it with a warning, as kube-apiserver's
// --service-account-max-token-expiration does.
func AddTokenRequest(s Storage, mint TokenMinter, maxExpiration time.Duration) {
	gv := corev1.SchemeGroupVersion
	s.add(gv, "serviceaccounts/token", &tokenRequestREST{
		serviceAccounts:      s[gv]["serviceaccounts"].(rest.Getter),
		secrets:              s[gv]["secrets"].(rest.Getter),
		mint:                 mint,
		maxExpirationSeconds: int64(maxExpiration / time.Second),
	})
}

type tokenRequestREST struct {
	serviceAccounts rest.Getter
	secrets         rest.Getter
	mint            TokenMinter
	// maxExpirationSeconds is the server's longest lifetime (0: kube's
	// 2^32 seconds only).
	maxExpirationSeconds int64
}

var (
	_ rest.NamedCreater             = &tokenRequestREST{}
	_ rest.GroupVersionKindProvider = &tokenRequestREST{}
	_ rest.SingularNameProvider     = &tokenRequestREST{}

	tokenRequestGVK = authenticationv1.SchemeGroupVersion.WithKind("TokenRequest")
)

func (r *tokenRequestREST) New() runtime.Object { return &authenticationv1.TokenRequest{} }
func (r *tokenRequestREST) Destroy()            {}

// GetSingularName implements rest.SingularNameProvider.
func (r *tokenRequestREST) GetSingularName() string { return "token" }

// GroupVersionKind says the subresource speaks authentication.k8s.io/v1
// TokenRequest, as in kube.
func (r *tokenRequestREST) GroupVersionKind(schema.GroupVersion) schema.GroupVersionKind {
	return tokenRequestGVK
}

// Create mints a token for the ServiceAccount name.
func (r *tokenRequestREST) Create(ctx context.Context, name string, obj runtime.Object, createValidation rest.ValidateObjectFunc,
	_ *metav1.CreateOptions) (runtime.Object, error) {
	req, ok := obj.(*authenticationv1.TokenRequest)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("not a TokenRequest: %T", obj))
	}
	cluster, ok := clusters.From(ctx)
	if !ok || cluster == clusters.Wildcard {
		return nil, apierrors.NewBadRequest("a TokenRequest needs one logical cluster")
	}
	if req.Spec.ExpirationSeconds == nil {
		s := defaultTokenExpirationSeconds
		req.Spec.ExpirationSeconds = &s
	}
	if errs := validateTokenRequest(req); len(errs) > 0 {
		return nil, apierrors.NewInvalid(tokenRequestGVK.GroupKind(), name, errs)
	}
	if s := capExpiration(*req.Spec.ExpirationSeconds, r.maxExpirationSeconds); s != *req.Spec.ExpirationSeconds {
		warning.AddWarning(ctx, "", fmt.Sprintf("requested expiration of %d seconds shortened to %d seconds", *req.Spec.ExpirationSeconds, s))
		req.Spec.ExpirationSeconds = &s
	}
	if createValidation != nil {
		if err := createValidation(ctx, req.DeepCopyObject()); err != nil {
			return nil, err
		}
	}
	saObj, err := r.serviceAccounts.Get(ctx, name, &metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	b := TokenBinding{Cluster: cluster, ServiceAccount: saObj.(*corev1.ServiceAccount), Audiences: req.Spec.Audiences,
		Expiration: time.Duration(*req.Spec.ExpirationSeconds) * time.Second}
	if ref := req.Spec.BoundObjectRef; ref != nil {
		secretObj, err := r.secrets.Get(ctx, ref.Name, &metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			// The registry names the request's resource (serviceaccounts).
			return nil, apierrors.NewNotFound(corev1.Resource("secrets"), ref.Name)
		}
		if err != nil {
			return nil, err
		}
		b.Secret = secretObj.(*corev1.Secret)
		if ref.UID != "" && ref.UID != b.Secret.UID {
			return nil, apierrors.NewConflict(corev1.Resource("secrets"), ref.Name,
				fmt.Errorf("the UID in the bound object reference (%s) does not match the Secret's (%s)", ref.UID, b.Secret.UID))
		}
	}
	token, audiences, expires, err := r.mint(b)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	out := req.DeepCopy()
	ns, _ := genericapirequest.NamespaceFrom(ctx)
	out.Name, out.Namespace = name, ns
	out.Spec.Audiences = audiences
	out.Status = authenticationv1.TokenRequestStatus{Token: token, ExpirationTimestamp: metav1.NewTime(expires)}
	return out, nil
}

// capExpiration shortens seconds to the server's maximum (none when 0).
func capExpiration(seconds, maxSeconds int64) int64 {
	if maxSeconds > 0 && seconds > maxSeconds {
		return maxSeconds
	}
	return seconds
}

// validateTokenRequest applies kube-apiserver's bounds, in seconds.
func validateTokenRequest(req *authenticationv1.TokenRequest) field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	exp := *req.Spec.ExpirationSeconds
	if exp < minTokenExpirationSeconds {
		errs = append(errs, field.Invalid(spec.Child("expirationSeconds"), *req.Spec.ExpirationSeconds, "may not specify a duration less than 10 minutes"))
	}
	if exp > maxTokenExpirationSeconds {
		errs = append(errs, field.Invalid(spec.Child("expirationSeconds"), *req.Spec.ExpirationSeconds, "may not specify a duration larger than 2^32 seconds"))
	}
	if ref := req.Spec.BoundObjectRef; ref != nil {
		p := spec.Child("boundObjectRef")
		switch {
		case ref.Kind != "Secret":
			errs = append(errs, field.NotSupported(p.Child("kind"), ref.Kind, []string{"Secret"}))
		case ref.APIVersion != "" && ref.APIVersion != "v1":
			errs = append(errs, field.NotSupported(p.Child("apiVersion"), ref.APIVersion, []string{"v1"}))
		case ref.Name == "":
			errs = append(errs, field.Required(p.Child("name"), ""))
		}
	}
	return errs
}
