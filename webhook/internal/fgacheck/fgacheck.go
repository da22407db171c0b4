// Package fgacheck asks OpenFGA (its HTTP API, through
// github.com/openfga/go-sdk) what the webhook needs: Check with contextual
// tuples, the newest model of a store, ListObjects.
package fgacheck

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	openfga "github.com/openfga/go-sdk"
	"github.com/openfga/go-sdk/credentials"

	"github.com/meshplane/meshplane/webhook/internal/mapping"
)

// Client talks to one OpenFGA server.
type Client struct {
	api *openfga.APIClient
}

// Option configures the client's OpenFGA connection.
type Option func(*openfga.Configuration)

// WithPresharedKey sends key as the bearer token of every call: the API
// key of an OpenFGA run with authn method "preshared".
func WithPresharedKey(key string) Option {
	return func(cfg *openfga.Configuration) {
		cfg.Credentials = &credentials.Credentials{Method: credentials.CredentialsMethodApiToken, Config: &credentials.Config{ApiToken: key}}
	}
}

// New returns a client for the OpenFGA HTTP API at url. Each call is
// bounded by timeout and not retried: a decision must be quick, and the
// apiserver asks again.
func New(url string, timeout time.Duration, opts ...Option) (*Client, error) {
	transport := &http.Transport{
		DialContext:         (&net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        256,
		MaxIdleConnsPerHost: 256,
		IdleConnTimeout:     90 * time.Second,
	}
	config := openfga.Configuration{
		ApiUrl:      url,
		UserAgent:   "meshplane-rebac-authz-webhook",
		HTTPClient:  &http.Client{Timeout: timeout, Transport: transport},
		RetryParams: &openfga.RetryParams{MaxRetry: 0, MinWaitInMs: 10},
	}
	for _, o := range opts {
		o(&config)
	}
	cfg, err := openfga.NewConfiguration(config)
	if err != nil {
		return nil, fmt.Errorf("openfga client for %s: %w", url, err)
	}
	return &Client{api: openfga.NewAPIClient(cfg)}, nil
}

// ErrInvalid marks a Check OpenFGA refused as invalid (400: an unknown
// type or relation, e.g. a resource the store's model does not have, or
// an unknown store). It is no outage: the answer is "no opinion".
var ErrInvalid = errors.New("openfga refused the request")

func classify(what string, resp *http.Response, err error) error {
	var validation openfga.FgaApiValidationError
	var notFound openfga.FgaApiNotFoundError
	if errors.As(err, &validation) || errors.As(err, &notFound) ||
		(resp != nil && (resp.StatusCode == http.StatusBadRequest || resp.StatusCode == http.StatusNotFound)) {
		return fmt.Errorf("%s: %w: %v", what, ErrInvalid, err)
	}
	return fmt.Errorf("%s: %w", what, err)
}

func tupleKeys(ts []mapping.Tuple) []openfga.TupleKey {
	out := make([]openfga.TupleKey, len(ts))
	for i, t := range ts {
		out[i] = openfga.TupleKey{Object: t.Object, Relation: t.Relation, User: t.User}
	}
	return out
}

// Check asks whether q holds in store under model (the store's newest
// model when empty); fresh asks past OpenFGA's caches (HIGHER_CONSISTENCY).
func (c *Client) Check(ctx context.Context, store, model string, q mapping.Query, fresh bool) (bool, error) {
	body := openfga.CheckRequest{TupleKey: openfga.CheckRequestTupleKey{User: q.User, Relation: q.Relation, Object: q.Object}}
	if fresh {
		body.Consistency = openfga.CONSISTENCYPREFERENCE_HIGHER_CONSISTENCY.Ptr()
	}
	if len(q.Contextual) > 0 {
		body.ContextualTuples = &openfga.ContextualTupleKeys{TupleKeys: tupleKeys(q.Contextual)}
	}
	if model != "" {
		body.AuthorizationModelId = &model
	}
	resp, httpResp, err := c.api.OpenFgaApi.Check(ctx, store).Body(body).Execute()
	if err != nil {
		return false, classify(fmt.Sprintf("check %s %s %s in store %s", q.User, q.Relation, q.Object, store), httpResp, err)
	}
	return resp.GetAllowed(), nil
}

// LatestModel returns the id of a store's newest authorization model, ""
// when it has none. A deleted store is ErrInvalid: OpenFGA's delete is
// soft, and its models and Checks still answer.
func (c *Client) LatestModel(ctx context.Context, store string) (string, error) {
	if _, httpResp, err := c.api.OpenFgaApi.GetStore(ctx, store).Execute(); err != nil {
		return "", classify("reading store "+store, httpResp, err)
	}
	resp, httpResp, err := c.api.OpenFgaApi.ReadAuthorizationModels(ctx, store).PageSize(1).Execute()
	if err != nil {
		return "", classify("reading the models of store "+store, httpResp, err)
	}
	if len(resp.AuthorizationModels) == 0 {
		return "", nil
	}
	return resp.AuthorizationModels[0].Id, nil
}

// ListObjects returns the objects of type typ on which user has relation.
func (c *Client) ListObjects(ctx context.Context, store, model, user, relation, typ string, contextual []mapping.Tuple) ([]string, error) {
	body := openfga.ListObjectsRequest{User: user, Relation: relation, Type: typ}
	if len(contextual) > 0 {
		body.ContextualTuples = &openfga.ContextualTupleKeys{TupleKeys: tupleKeys(contextual)}
	}
	if model != "" {
		body.AuthorizationModelId = &model
	}
	resp, httpResp, err := c.api.OpenFgaApi.ListObjects(ctx, store).Body(body).Execute()
	if err != nil {
		return nil, classify(fmt.Sprintf("list objects %s %s %s in store %s", user, relation, typ, store), httpResp, err)
	}
	return resp.Objects, nil
}

// maxBatch is OpenFGA's default limit of checks in one BatchCheck.
const maxBatch = 50

// BatchCheck asks many Checks at once (in calls of at most 50) and
// returns their answers in order; a Check OpenFGA could not answer is
// false.
func (c *Client) BatchCheck(ctx context.Context, store, model string, qs []mapping.Query) ([]bool, error) {
	out := make([]bool, len(qs))
	for start := 0; start < len(qs); start += maxBatch {
		end := min(start+maxBatch, len(qs))
		body := openfga.BatchCheckRequest{}
		if model != "" {
			body.AuthorizationModelId = &model
		}
		for i := start; i < end; i++ {
			q := qs[i]
			item := openfga.BatchCheckItem{TupleKey: openfga.CheckRequestTupleKey{User: q.User, Relation: q.Relation, Object: q.Object},
				CorrelationId: fmt.Sprintf("q%d", i)}
			if len(q.Contextual) > 0 {
				item.ContextualTuples = &openfga.ContextualTupleKeys{TupleKeys: tupleKeys(q.Contextual)}
			}
			body.Checks = append(body.Checks, item)
		}
		resp, httpResp, err := c.api.OpenFgaApi.BatchCheck(ctx, store).Body(body).Execute()
		if err != nil {
			return nil, classify(fmt.Sprintf("batch check of %d in store %s", end-start, store), httpResp, err)
		}
		if resp.Result == nil {
			continue
		}
		for i := start; i < end; i++ {
			if r, ok := (*resp.Result)[fmt.Sprintf("q%d", i)]; ok && r.Allowed != nil {
				out[i] = *r.Allowed
			}
		}
	}
	return out, nil
}
