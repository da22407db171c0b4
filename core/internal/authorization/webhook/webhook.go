// Package webhook is the core's authorization webhook: k8s.io/apiserver's
// webhook authorizer (SubjectAccessReviews sent to a server named by a
// kubeconfig file), asked with the request's logical cluster in the
// review's spec.extra, as kcp asks. It fails closed: when the webhook
// cannot answer (down, timeout, 5xx) the decision is NoOpinion without an
// error, which the end of the chain turns into a 403 (an error would make
// the request a 500). It fails fast: each call has a short timeout, and
// after a failure a circuit breaker denies at once (without asking) until
// a probe after a back-off finds the webhook answering again.
package webhook

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	authorizationcel "k8s.io/apiserver/pkg/authorization/cel"
	webhookutil "k8s.io/apiserver/pkg/util/webhook"
	"k8s.io/apiserver/plugin/pkg/authorizer/webhook"
	webhookmetrics "k8s.io/apiserver/plugin/pkg/authorizer/webhook/metrics"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"github.com/meshplane/meshplane/core/internal/clusters"
)

// The extra keys that carry the logical cluster of the request: kcp's
// (since 0.28.3) and the older one Platform Mesh's webhook still reads.
const (
	ClusterNameKey       = "authorization.kcp.io/cluster-name"
	LegacyClusterNameKey = "authorization.kubernetes.io/cluster-name"
)

// Config says where the webhook is and how long its answers are cached.
type Config struct {
	// KubeconfigFile names the webhook server (clusters[].cluster.server,
	// certificate-authority) and the core's client credential (users[]).
	KubeconfigFile string
	// Version is the SubjectAccessReview version sent: v1 or v1beta1.
	Version string
	// AuthorizedTTL and UnauthorizedTTL are how long allowed and not
	// allowed answers are cached.
	AuthorizedTTL, UnauthorizedTTL time.Duration
	// Timeout bounds one call to the webhook (kube's default is 30 s).
	Timeout time.Duration
	// Breaker fails calls fast while the webhook is known down; share it
	// with the rules client (NewRules) of the same webhook.
	Breaker *Breaker
}

// clientConfig loads the webhook's kubeconfig with the timeout and the
// breaker.
func clientConfig(kubeconfigFile string, timeout time.Duration, b *Breaker) (*rest.Config, error) {
	rc, err := webhookutil.LoadKubeconfig(kubeconfigFile, nil)
	if err != nil {
		return nil, fmt.Errorf("authorization webhook config file %s: %w", kubeconfigFile, err)
	}
	if timeout > 0 {
		rc.Timeout = timeout
	}
	if b != nil {
		rc.Wrap(b.RoundTripper)
	}
	return rc, nil
}

// New builds the authorizer. A bad kubeconfig file is an error here, not
// at the first request.
func New(c Config) (authorizer.Authorizer, error) {
	rc, err := clientConfig(c.KubeconfigFile, c.Timeout, c.Breaker)
	if err != nil {
		return nil, err
	}
	// kube's retries: a 500 or a 503 with Retry-After is asked again, with
	// back-off (about 4 s in all); a refused connection or a timeout fails
	// at once, and so does every call while the breaker is open.
	backoff := *webhook.DefaultRetryBackoff()
	compiler := authorizationcel.NewDefaultCompiler()
	a, err := webhook.New(rc, c.Version, c.AuthorizedTTL, c.UnauthorizedTTL, backoff,
		authorizer.DecisionNoOpinion, nil, "rebac", webhookmetrics.NoopAuthorizerMetrics{}, compiler)
	if err != nil {
		return nil, fmt.Errorf("authorization webhook: %w", err)
	}
	return withCluster{a}, nil
}

// withCluster adds the request's logical cluster to the user's extra, so
// the review (and the cache key) carries it.
type withCluster struct {
	delegate authorizer.Authorizer
}

func (w withCluster) Authorize(ctx context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	d, reason, err := w.authorize(ctx, a)
	if errors.Is(err, ErrUnavailable) {
		// The breaker logged when it opened.
		return authorizer.DecisionNoOpinion, "the authorization webhook is unavailable", nil
	}
	if err != nil {
		klog.FromContext(ctx).Error(err, "authorization webhook failed; not allowing", "user", userName(a), "verb", a.GetVerb(), "resource", a.GetResource(), "path", a.GetPath())
		return authorizer.DecisionNoOpinion, "the authorization webhook could not answer", nil
	}
	return d, reason, nil
}

func userName(a authorizer.Attributes) string {
	if a.GetUser() == nil {
		return ""
	}
	return a.GetUser().GetName()
}

func (w withCluster) authorize(ctx context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	cluster, ok := clusters.From(ctx)
	if !ok || a.GetUser() == nil {
		return w.delegate.Authorize(ctx, a)
	}
	u := a.GetUser()
	extra := make(map[string][]string, len(u.GetExtra())+2)
	for k, v := range u.GetExtra() {
		extra[k] = v
	}
	extra[ClusterNameKey] = []string{cluster}
	extra[LegacyClusterNameKey] = []string{cluster}
	return w.delegate.Authorize(ctx, attributes{Attributes: a, user: &user.DefaultInfo{
		Name: u.GetName(), UID: u.GetUID(), Groups: u.GetGroups(), Extra: extra,
	}})
}

// attributes are a request's attributes with another user.
type attributes struct {
	authorizer.Attributes
	user user.Info
}

func (a attributes) GetUser() user.Info { return a.user }
