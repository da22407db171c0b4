package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/client-go/rest"

	"github.com/meshplane/meshplane/core/internal/clusters"
)

// Rules asks the webhook what a user may do, for SelfSubjectRulesReviews
// (a Meshplane extension; kube's webhook authorizer lists no rules): it
// POSTs a SubjectAccessReview naming the user, the logical cluster (in
// spec.extra) and the namespace (spec.resourceAttributes.namespace) to
// path on the webhook's server and reads a SelfSubjectRulesReview back.
type Rules struct {
	client *http.Client
	url    string
}

// NewRules builds the rule resolver from the webhook's kubeconfig, each
// call bounded by timeout (10 s when 0) and behind the webhook's breaker
// (none when nil).
func NewRules(kubeconfigFile, path string, timeout time.Duration, b *Breaker) (*Rules, error) {
	hc, u, err := pathClient(kubeconfigFile, path, timeout, b)
	if err != nil {
		return nil, err
	}
	return &Rules{client: hc, url: u}, nil
}

// RulesFor returns the webhook's rules for u in namespace of the
// request's cluster.
func (r *Rules) RulesFor(ctx context.Context, u user.Info, namespace string) ([]authorizer.ResourceRuleInfo, []authorizer.NonResourceRuleInfo, bool, error) {
	cluster, ok := clusters.From(ctx)
	if !ok || u == nil {
		return nil, nil, true, nil
	}
	extra := convertExtra(u.GetExtra())
	extra[ClusterNameKey] = authorizationv1.ExtraValue{cluster}
	extra[LegacyClusterNameKey] = authorizationv1.ExtraValue{cluster}
	sar := authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: u.GetName(), UID: u.GetUID(), Groups: u.GetGroups(), Extra: extra,
		ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: namespace}}}
	sar.APIVersion, sar.Kind = authorizationv1.SchemeGroupVersion.String(), "SubjectAccessReview"
	body, err := json.Marshal(&sar)
	if err != nil {
		return nil, nil, true, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.url, bytes.NewReader(body))
	if err != nil {
		return nil, nil, true, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := r.client.Do(req)
	if err != nil {
		return nil, nil, true, fmt.Errorf("authorization webhook rules: %w", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return nil, nil, true, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, nil, true, fmt.Errorf("authorization webhook rules: HTTP %d", resp.StatusCode)
	}
	var out authorizationv1.SelfSubjectRulesReview
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, nil, true, fmt.Errorf("authorization webhook rules: %w", err)
	}
	var res []authorizer.ResourceRuleInfo
	for _, rr := range out.Status.ResourceRules {
		res = append(res, &authorizer.DefaultResourceRuleInfo{Verbs: rr.Verbs, APIGroups: rr.APIGroups, Resources: rr.Resources, ResourceNames: rr.ResourceNames})
	}
	var nonRes []authorizer.NonResourceRuleInfo
	for _, nr := range out.Status.NonResourceRules {
		nonRes = append(nonRes, &authorizer.DefaultNonResourceRuleInfo{Verbs: nr.Verbs, NonResourceURLs: nr.NonResourceURLs})
	}
	if out.Status.EvaluationError != "" {
		err = fmt.Errorf("authorization webhook rules: %s", out.Status.EvaluationError)
	}
	return res, nonRes, out.Status.Incomplete, err
}

func convertExtra(in map[string][]string) map[string]authorizationv1.ExtraValue {
	out := make(map[string]authorizationv1.ExtraValue, len(in)+2)
	for k, v := range in {
		out[k] = authorizationv1.ExtraValue(v)
	}
	return out
}

// pathClient is an HTTP client of the webhook's server (its kubeconfig's
// credentials, each call bounded by timeout, 10 s when 0, behind b when
// not nil) and the URL of path there: for the webhook's extra endpoints.
func pathClient(kubeconfigFile, path string, timeout time.Duration, b *Breaker) (*http.Client, string, error) {
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	rc, err := clientConfig(kubeconfigFile, timeout, b)
	if err != nil {
		return nil, "", err
	}
	u, err := url.Parse(rc.Host)
	if err != nil {
		return nil, "", fmt.Errorf("authorization webhook server %q: %w", rc.Host, err)
	}
	u.Path = path
	hc, err := rest.HTTPClientFor(rc)
	if err != nil {
		return nil, "", fmt.Errorf("authorization webhook client: %w", err)
	}
	return hc, u.String(), nil
}
