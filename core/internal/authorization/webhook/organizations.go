package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apiserver/pkg/authentication/user"
)

// Organizations asks the webhook which organizations a user has a role
// in, for the "myorgs" virtual workspace (a Meshplane extension): it POSTs
// a SubjectAccessReview naming the user and groups to path on the
// webhook's server and reads the organizations' names back.
type Organizations struct {
	client *http.Client
	url    string
}

// NewOrganizations builds the client from the webhook's kubeconfig, each
// call bounded by timeout (10 s when 0) and behind the webhook's breaker
// (none when nil).
func NewOrganizations(kubeconfigFile, path string, timeout time.Duration, b *Breaker) (*Organizations, error) {
	hc, u, err := pathClient(kubeconfigFile, path, timeout, b)
	if err != nil {
		return nil, err
	}
	return &Organizations{client: hc, url: u}, nil
}

// For returns the names of the organizations u has a role in, sorted.
func (o *Organizations) For(ctx context.Context, u user.Info) ([]string, error) {
	sar := authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: u.GetName(), UID: u.GetUID(), Groups: u.GetGroups()}}
	sar.APIVersion, sar.Kind = authorizationv1.SchemeGroupVersion.String(), "SubjectAccessReview"
	body, err := json.Marshal(&sar)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, o.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := o.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("authorization webhook organizations: %w", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("authorization webhook organizations: HTTP %d: %s", resp.StatusCode, bytes.TrimSpace(data))
	}
	var out struct {
		Organizations []string `json:"organizations"`
	}
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("authorization webhook organizations: %w", err)
	}
	return out.Organizations, nil
}
