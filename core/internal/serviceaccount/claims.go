// Package serviceaccount mints and verifies service-account tokens (JWTs)
// as kube-apiserver does, with kcp's addition: every token names the
// logical cluster of its ServiceAccount and is accepted only there.
//
// Bound tokens (TokenRequest, `kubectl create token`) carry kube's private
// claim "kubernetes.io" {namespace, serviceaccount, secret?} plus kcp's
// "clusterName" inside it; legacy tokens (Secrets of type
// kubernetes.io/service-account-token) carry the flat
// "kubernetes.io/serviceaccount/..." claims plus kcp's
// "kubernetes.io/serviceaccount/clusterName".
package serviceaccount

import (
	"github.com/golang-jwt/jwt/v5"
)

// LegacyIssuer is the issuer of legacy Secret tokens, as in kube.
const LegacyIssuer = "kubernetes/serviceaccount"

// Subject is what a token says about its ServiceAccount.
type Subject struct {
	Cluster   string
	Namespace string
	Name      string
	UID       string
	// SecretName and SecretUID: the legacy token's Secret, or the Secret a
	// bound token is bound to (its UID then guards against re-creation).
	SecretName string
	SecretUID  string
	// Legacy tokens are checked against the Secret's data.
	Legacy bool
}

type ref struct {
	Name string `json:"name"`
	UID  string `json:"uid"`
}

// kubernetesClaims is kube's "kubernetes.io" private claim; ClusterName is
// kcp's addition.
type kubernetesClaims struct {
	Namespace      string `json:"namespace,omitempty"`
	ServiceAccount *ref   `json:"serviceaccount,omitempty"`
	Secret         *ref   `json:"secret,omitempty"`
	ClusterName    string `json:"clusterName,omitempty"`
}

// claims is a token's payload: the registered claims, the bound token's
// private claim, and the legacy token's flat claims.
type claims struct {
	jwt.RegisteredClaims
	Kubernetes *kubernetesClaims `json:"kubernetes.io,omitempty"`

	LegacyNamespace  string `json:"kubernetes.io/serviceaccount/namespace,omitempty"`
	LegacySecretName string `json:"kubernetes.io/serviceaccount/secret.name,omitempty"`
	LegacyName       string `json:"kubernetes.io/serviceaccount/service-account.name,omitempty"`
	LegacyUID        string `json:"kubernetes.io/serviceaccount/service-account.uid,omitempty"`
	LegacyCluster    string `json:"kubernetes.io/serviceaccount/clusterName,omitempty"`
}

// subject reads the subject of verified claims; ok is false when they do
// not describe a complete service account.
func (c *claims) subject() (Subject, bool) {
	var s Subject
	if c.Issuer == LegacyIssuer {
		s = Subject{Cluster: c.LegacyCluster, Namespace: c.LegacyNamespace, Name: c.LegacyName, UID: c.LegacyUID,
			SecretName: c.LegacySecretName, Legacy: true}
		if s.SecretName == "" {
			return Subject{}, false
		}
	} else {
		k := c.Kubernetes
		if k == nil || k.ServiceAccount == nil {
			return Subject{}, false
		}
		s = Subject{Cluster: k.ClusterName, Namespace: k.Namespace, Name: k.ServiceAccount.Name, UID: k.ServiceAccount.UID}
		if k.Secret != nil {
			s.SecretName, s.SecretUID = k.Secret.Name, k.Secret.UID
		}
	}
	if s.Cluster == "" || s.Namespace == "" || s.Name == "" || s.UID == "" {
		return Subject{}, false
	}
	return s, true
}
