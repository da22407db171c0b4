package builtin

import (
	"context"
	"fmt"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
)

// AddReviews adds the create-only review resources, answered with the
// server's own authenticator and authorizer.
func AddReviews(s Storage, authn authenticator.Token, authz authorizer.Authorizer, rules authorizer.RuleResolver) {
	authnGV, authzGV := authenticationv1.SchemeGroupVersion, authorizationv1.SchemeGroupVersion
	s.add(authnGV, "tokenreviews", &review{kind: "TokenReview", singular: "tokenreview",
		newFunc: func() runtime.Object { return &authenticationv1.TokenReview{} },
		create: func(ctx context.Context, obj runtime.Object) (runtime.Object, error) {
			tr := obj.(*authenticationv1.TokenReview)
			if tr.Spec.Token == "" {
				return nil, apierrors.NewBadRequest("spec.token is required")
			}
			if len(tr.Spec.Audiences) > 0 {
				ctx = authenticator.WithAudiences(ctx, tr.Spec.Audiences)
			}
			resp, ok, err := authn.AuthenticateToken(ctx, tr.Spec.Token)
			tr.Status = authenticationv1.TokenReviewStatus{Authenticated: ok && err == nil}
			if err != nil {
				tr.Status.Error = err.Error()
			}
			if ok && err == nil {
				tr.Status.User = userInfo(resp.User)
				tr.Status.Audiences = resp.Audiences
			}
			return tr, nil
		}})
	s.add(authnGV, "selfsubjectreviews", &review{kind: "SelfSubjectReview", singular: "selfsubjectreview",
		newFunc: func() runtime.Object { return &authenticationv1.SelfSubjectReview{} },
		create: func(ctx context.Context, obj runtime.Object) (runtime.Object, error) {
			u, ok := genericapirequest.UserFrom(ctx)
			if !ok {
				return nil, apierrors.NewBadRequest("no user in the request")
			}
			r := obj.(*authenticationv1.SelfSubjectReview)
			r.Status.UserInfo = userInfo(u)
			return r, nil
		}})
	s.add(authzGV, "subjectaccessreviews", &review{kind: "SubjectAccessReview", singular: "subjectaccessreview",
		newFunc: func() runtime.Object { return &authorizationv1.SubjectAccessReview{} },
		create: func(ctx context.Context, obj runtime.Object) (runtime.Object, error) {
			r := obj.(*authorizationv1.SubjectAccessReview)
			if r.Spec.User == "" && len(r.Spec.Groups) == 0 {
				return nil, apierrors.NewBadRequest("at least one of user or group must be specified")
			}
			u := &user.DefaultInfo{Name: r.Spec.User, UID: r.Spec.UID, Groups: r.Spec.Groups, Extra: extraFrom(r.Spec.Extra)}
			r.Status = decide(ctx, authz, u, r.Spec.ResourceAttributes, r.Spec.NonResourceAttributes)
			return r, nil
		}})
	s.add(authzGV, "localsubjectaccessreviews", &review{kind: "LocalSubjectAccessReview", singular: "localsubjectaccessreview", namespaced: true,
		newFunc: func() runtime.Object { return &authorizationv1.LocalSubjectAccessReview{} },
		create: func(ctx context.Context, obj runtime.Object) (runtime.Object, error) {
			r := obj.(*authorizationv1.LocalSubjectAccessReview)
			ns, _ := genericapirequest.NamespaceFrom(ctx)
			if r.Spec.ResourceAttributes == nil || r.Spec.ResourceAttributes.Namespace != ns {
				return nil, apierrors.NewBadRequest(fmt.Sprintf("spec.resourceAttributes.namespace must match the request namespace %q", ns))
			}
			u := &user.DefaultInfo{Name: r.Spec.User, UID: r.Spec.UID, Groups: r.Spec.Groups, Extra: extraFrom(r.Spec.Extra)}
			r.Status = decide(ctx, authz, u, r.Spec.ResourceAttributes, nil)
			return r, nil
		}})
	s.add(authzGV, "selfsubjectaccessreviews", &review{kind: "SelfSubjectAccessReview", singular: "selfsubjectaccessreview",
		newFunc: func() runtime.Object { return &authorizationv1.SelfSubjectAccessReview{} },
		create: func(ctx context.Context, obj runtime.Object) (runtime.Object, error) {
			u, ok := genericapirequest.UserFrom(ctx)
			if !ok {
				return nil, apierrors.NewBadRequest("no user in the request")
			}
			r := obj.(*authorizationv1.SelfSubjectAccessReview)
			r.Status = decide(ctx, authz, u, r.Spec.ResourceAttributes, r.Spec.NonResourceAttributes)
			return r, nil
		}})
	s.add(authzGV, "selfsubjectrulesreviews", &review{kind: "SelfSubjectRulesReview", singular: "selfsubjectrulesreview",
		newFunc: func() runtime.Object { return &authorizationv1.SelfSubjectRulesReview{} },
		create: func(ctx context.Context, obj runtime.Object) (runtime.Object, error) {
			u, ok := genericapirequest.UserFrom(ctx)
			if !ok {
				return nil, apierrors.NewBadRequest("no user in the request")
			}
			r := obj.(*authorizationv1.SelfSubjectRulesReview)
			if r.Spec.Namespace == "" {
				return nil, apierrors.NewBadRequest("spec.namespace is required")
			}
			res, nonRes, incomplete, err := rules.RulesFor(ctx, u, r.Spec.Namespace)
			r.Status = authorizationv1.SubjectRulesReviewStatus{Incomplete: incomplete}
			if err != nil {
				r.Status.EvaluationError = err.Error()
			}
			for _, rr := range res {
				r.Status.ResourceRules = append(r.Status.ResourceRules, authorizationv1.ResourceRule{
					Verbs: rr.GetVerbs(), APIGroups: rr.GetAPIGroups(), Resources: rr.GetResources(), ResourceNames: rr.GetResourceNames()})
			}
			for _, nr := range nonRes {
				r.Status.NonResourceRules = append(r.Status.NonResourceRules, authorizationv1.NonResourceRule{
					Verbs: nr.GetVerbs(), NonResourceURLs: nr.GetNonResourceURLs()})
			}
			return r, nil
		}})
}

func decide(ctx context.Context, authz authorizer.Authorizer, u user.Info, res *authorizationv1.ResourceAttributes,
	nonRes *authorizationv1.NonResourceAttributes) authorizationv1.SubjectAccessReviewStatus {
	attrs := authorizer.AttributesRecord{User: u}
	switch {
	case res != nil:
		attrs.ResourceRequest = true
		attrs.Verb, attrs.Namespace, attrs.APIGroup, attrs.APIVersion = res.Verb, res.Namespace, res.Group, res.Version
		attrs.Resource, attrs.Subresource, attrs.Name = res.Resource, res.Subresource, res.Name
	case nonRes != nil:
		attrs.Verb, attrs.Path = nonRes.Verb, nonRes.Path
	default:
		return authorizationv1.SubjectAccessReviewStatus{EvaluationError: "resourceAttributes or nonResourceAttributes is required"}
	}
	decision, reason, err := authz.Authorize(ctx, attrs)
	st := authorizationv1.SubjectAccessReviewStatus{
		Allowed: decision == authorizer.DecisionAllow,
		Denied:  decision == authorizer.DecisionDeny,
		Reason:  reason,
	}
	if err != nil {
		st.EvaluationError = err.Error()
	}
	return st
}

func userInfo(u user.Info) authenticationv1.UserInfo {
	out := authenticationv1.UserInfo{Username: u.GetName(), UID: u.GetUID(), Groups: u.GetGroups()}
	for k, v := range u.GetExtra() {
		if out.Extra == nil {
			out.Extra = map[string]authenticationv1.ExtraValue{}
		}
		out.Extra[k] = v
	}
	return out
}

func extraFrom(in map[string]authorizationv1.ExtraValue) map[string][]string {
	out := map[string][]string{}
	for k, v := range in {
		out[k] = v
	}
	return out
}

// review is a create-only resource whose answer is computed, never stored.
type review struct {
	kind, singular string
	namespaced     bool
	newFunc        func() runtime.Object
	create         func(ctx context.Context, obj runtime.Object) (runtime.Object, error)
}

var (
	_ rest.Creater                  = &review{}
	_ rest.Scoper                   = &review{}
	_ rest.SingularNameProvider     = &review{}
	_ rest.GroupVersionKindProvider = (*review)(nil)
)

func (r *review) New() runtime.Object     { return r.newFunc() }
func (r *review) Destroy()                {}
func (r *review) NamespaceScoped() bool   { return r.namespaced }
func (r *review) GetSingularName() string { return r.singular }
func (r *review) GroupVersionKind(gv schema.GroupVersion) schema.GroupVersionKind {
	return gv.WithKind(r.kind)
}

func (r *review) Create(ctx context.Context, obj runtime.Object, createValidation rest.ValidateObjectFunc, options *metav1.CreateOptions) (runtime.Object, error) {
	if createValidation != nil {
		if err := createValidation(ctx, obj); err != nil {
			return nil, err
		}
	}
	return r.create(ctx, obj)
}

// WithDefaultAudiences has token check tokens for auds when the request
// names no audiences (a TokenReview without spec.audiences), as
// kube-apiserver checks them for its API audiences.
func WithDefaultAudiences(auds []string, token authenticator.Token) authenticator.Token {
	return authenticator.TokenFunc(func(ctx context.Context, t string) (*authenticator.Response, bool, error) {
		if _, ok := authenticator.AudiencesFrom(ctx); !ok && len(auds) > 0 {
			ctx = authenticator.WithAudiences(ctx, auds)
		}
		return token.AuthenticateToken(ctx, t)
	})
}
