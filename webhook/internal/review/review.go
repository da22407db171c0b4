// Package review reads SubjectAccessReviews (authorization.k8s.io v1 and
// v1beta1, JSON) and writes the answer in the version asked.
package review

import (
	"encoding/json"
	"fmt"

	authorizationv1 "k8s.io/api/authorization/v1"
	authorizationv1beta1 "k8s.io/api/authorization/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MaxBodyBytes caps a review's size.
const MaxBodyBytes = 1 << 20

// The extra keys that carry the logical cluster: kcp's (since 0.28.3) and
// the older one.
const (
	ClusterNameKey       = "authorization.kcp.io/cluster-name"
	LegacyClusterNameKey = "authorization.kubernetes.io/cluster-name"
)

// Review is a review in v1 terms, with the version it came in.
type Review struct {
	APIVersion string
	Spec       authorizationv1.SubjectAccessReviewSpec
}

// Cluster is the logical cluster the review is about ("" when absent).
func (r Review) Cluster() string {
	for _, key := range []string{ClusterNameKey, LegacyClusterNameKey} {
		if v := r.Spec.Extra[key]; len(v) == 1 && v[0] != "" {
			return v[0]
		}
	}
	return ""
}

type typeMeta struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
}

// Decode reads a review; an unknown version or kind is an error.
func Decode(body []byte) (Review, error) {
	var tm typeMeta
	if err := json.Unmarshal(body, &tm); err != nil {
		return Review{}, fmt.Errorf("decoding the review: %w", err)
	}
	if tm.Kind != "SubjectAccessReview" {
		return Review{}, fmt.Errorf("kind %q: want SubjectAccessReview", tm.Kind)
	}
	switch tm.APIVersion {
	case authorizationv1.SchemeGroupVersion.String():
		var sar authorizationv1.SubjectAccessReview
		if err := json.Unmarshal(body, &sar); err != nil {
			return Review{}, fmt.Errorf("decoding the review: %w", err)
		}
		return Review{APIVersion: tm.APIVersion, Spec: sar.Spec}, nil
	case authorizationv1beta1.SchemeGroupVersion.String():
		var sar authorizationv1beta1.SubjectAccessReview
		if err := json.Unmarshal(body, &sar); err != nil {
			return Review{}, fmt.Errorf("decoding the review: %w", err)
		}
		return Review{APIVersion: tm.APIVersion, Spec: fromV1beta1(sar.Spec)}, nil
	default:
		return Review{}, fmt.Errorf("apiVersion %q: want authorization.k8s.io/v1 or authorization.k8s.io/v1beta1", tm.APIVersion)
	}
}

// Encode writes the answer in the review's version.
func Encode(apiVersion string, status authorizationv1.SubjectAccessReviewStatus) ([]byte, error) {
	if apiVersion == authorizationv1beta1.SchemeGroupVersion.String() {
		return json.Marshal(&authorizationv1beta1.SubjectAccessReview{
			TypeMeta: typeMetaOf(apiVersion),
			Status: authorizationv1beta1.SubjectAccessReviewStatus{Allowed: status.Allowed, Denied: status.Denied,
				Reason: status.Reason, EvaluationError: status.EvaluationError},
		})
	}
	return json.Marshal(&authorizationv1.SubjectAccessReview{TypeMeta: typeMetaOf(authorizationv1.SchemeGroupVersion.String()), Status: status})
}

func fromV1beta1(in authorizationv1beta1.SubjectAccessReviewSpec) authorizationv1.SubjectAccessReviewSpec {
	out := authorizationv1.SubjectAccessReviewSpec{User: in.User, Groups: in.Groups, UID: in.UID}
	if in.Extra != nil {
		out.Extra = make(map[string]authorizationv1.ExtraValue, len(in.Extra))
		for k, v := range in.Extra {
			out.Extra[k] = authorizationv1.ExtraValue(v)
		}
	}
	if ra := in.ResourceAttributes; ra != nil {
		out.ResourceAttributes = &authorizationv1.ResourceAttributes{Namespace: ra.Namespace, Verb: ra.Verb, Group: ra.Group,
			Version: ra.Version, Resource: ra.Resource, Subresource: ra.Subresource, Name: ra.Name}
	}
	if nra := in.NonResourceAttributes; nra != nil {
		out.NonResourceAttributes = &authorizationv1.NonResourceAttributes{Path: nra.Path, Verb: nra.Verb}
	}
	return out
}

func typeMetaOf(apiVersion string) metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: apiVersion, Kind: "SubjectAccessReview"}
}
