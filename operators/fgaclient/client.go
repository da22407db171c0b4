// Package fgaclient is what the security-operator asks of OpenFGA, over
// its HTTP API with github.com/openfga/go-sdk or, when set, its gRPC API:
// stores, models written only when they change, and tuples written and
// deleted idempotently.
package fgaclient

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	openfgav1 "github.com/openfga/api/proto/openfga/v1"
	openfga "github.com/openfga/go-sdk"
	"github.com/openfga/go-sdk/credentials"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/meshplane/meshplane/apis/core/v1alpha1"
)

// maxTuplesPerWrite is OpenFGA's default limit of one Write call.
const maxTuplesPerWrite = 100

// pageSize is how many stores or tuples one list call asks for.
const pageSize = 100

// Client talks to one OpenFGA server.
type Client struct {
	api *openfga.APIClient
	// rpc, when set (UseGRPC), carries every call but Check.
	rpc  openfgav1.OpenFGAServiceClient
	conn *grpc.ClientConn
	// key is the preshared API key sent with every call ("": none).
	key string

	// written remembers, per store, the model id and content hash this
	// client last wrote or found equal, so an unchanged model costs no
	// read of the (possibly large) stored model.
	mu      sync.Mutex
	written map[string]writtenModel
}

type writtenModel struct {
	id   string
	hash [sha256.Size]byte
}

func modelHash(m *openfgav1.AuthorizationModel) ([sha256.Size]byte, error) {
	c := proto.Clone(m).(*openfgav1.AuthorizationModel)
	c.Id = ""
	raw, err := proto.MarshalOptions{Deterministic: true}.Marshal(c)
	if err != nil {
		return [sha256.Size]byte{}, err
	}
	return sha256.Sum256(raw), nil
}

func (c *Client) remember(storeID, id string, h [sha256.Size]byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.written == nil {
		c.written = map[string]writtenModel{}
	}
	c.written[storeID] = writtenModel{id: id, hash: h}
}

// Option configures a Client.
type Option func(*Client)

// WithPresharedKey sends key as the bearer token of every call, HTTP and
// gRPC: the API key of an OpenFGA run with authn method "preshared".
func WithPresharedKey(key string) Option { return func(c *Client) { c.key = key } }

// New returns a client for the OpenFGA HTTP API at url
// (http://host:port).
func New(url string, opts ...Option) (*Client, error) {
	c := &Client{}
	for _, o := range opts {
		o(c)
	}
	config := openfga.Configuration{
		ApiUrl:     url,
		UserAgent:  "meshplane-security-operator",
		HTTPClient: &http.Client{Timeout: 30 * time.Second},
		// The controllers retry; one call should fail fast.
		RetryParams: &openfga.RetryParams{MaxRetry: 1, MinWaitInMs: 50},
	}
	if c.key != "" {
		config.Credentials = &credentials.Credentials{Method: credentials.CredentialsMethodApiToken, Config: &credentials.Config{ApiToken: c.key}}
	}
	cfg, err := openfga.NewConfiguration(config)
	if err != nil {
		return nil, fmt.Errorf("openfga client for %s: %w", url, err)
	}
	c.api = openfga.NewAPIClient(cfg)
	return c, nil
}

// bearer is a preshared key as gRPC call credentials. It does not ask for
// transport security: the platform's OpenFGA serves gRPC in plaintext on
// the loopback.
type bearer string

func (b bearer) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + string(b)}, nil
}

func (bearer) RequireTransportSecurity() bool { return false }

// UseGRPC sends the calls (all but Check) over OpenFGA's gRPC API at addr
// (host:port, plaintext, as the platform's own OpenFGA serves it on the
// loopback): OpenFGA's HTTP API is a gateway that forwards each call to
// its gRPC server (measured: 0.6-1.6 ms of OpenFGA's CPU per call; a write
// with the platform's model costs it 4-5 ms in all, most of it building
// the model's type system again for each call), and a model sent over
// HTTP is converted to JSON twice on this side (protojson, then the SDK's
// types) and parsed from JSON on OpenFGA's.
func (c *Client) UseGRPC(addr string) error {
	opts := []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}
	if c.key != "" {
		opts = append(opts, grpc.WithPerRPCCredentials(bearer(c.key)))
	}
	conn, err := grpc.NewClient(addr, opts...)
	if err != nil {
		return fmt.Errorf("openfga gRPC client for %s: %w", addr, err)
	}
	c.rpc, c.conn = openfgav1.NewOpenFGAServiceClient(conn), conn
	return nil
}

// Close closes the gRPC connection, if any.
func (c *Client) Close() error {
	if c.conn != nil {
		return c.conn.Close()
	}
	return nil
}

// writeRPC is one Write call over gRPC.
func (c *Client) writeRPC(ctx context.Context, storeID string, model *string, add, remove []v1alpha1.Tuple) error {
	req := &openfgav1.WriteRequest{StoreId: storeID}
	if model != nil {
		req.AuthorizationModelId = *model
	}
	if len(add) > 0 {
		req.Writes = &openfgav1.WriteRequestWrites{OnDuplicate: "ignore"}
		for _, t := range add {
			req.Writes.TupleKeys = append(req.Writes.TupleKeys, &openfgav1.TupleKey{Object: t.Object, Relation: t.Relation, User: t.User})
		}
	}
	if len(remove) > 0 {
		req.Deletes = &openfgav1.WriteRequestDeletes{OnMissing: "ignore"}
		for _, t := range remove {
			req.Deletes.TupleKeys = append(req.Deletes.TupleKeys, &openfgav1.TupleKeyWithoutCondition{Object: t.Object, Relation: t.Relation, User: t.User})
		}
	}
	_, err := c.rpc.Write(ctx, req)
	return err
}

// notFound reports a 404 answer, or OpenFGA's 400 for a model that does
// not exist (as rpcNotFound does over gRPC).
func notFound(resp *http.Response, err error) bool {
	if resp != nil && resp.StatusCode == http.StatusNotFound {
		return true
	}
	var apiErr openfga.FgaApiNotFoundError
	var invalid openfga.FgaApiValidationError
	return errors.As(err, &apiErr) ||
		errors.As(err, &invalid) && invalid.ResponseCode() == openfga.ERRORCODE_AUTHORIZATION_MODEL_NOT_FOUND
}

// rpcNotFound reports OpenFGA's gRPC answers for a store or model that
// does not exist (its own error codes, which its HTTP gateway turns into
// 404 or 400).
func rpcNotFound(err error) bool {
	switch status.Code(err) {
	case codes.NotFound, codes.Code(openfgav1.NotFoundErrorCode_store_id_not_found),
		codes.Code(openfgav1.ErrorCode_authorization_model_not_found):
		return true
	}
	return false
}

// StoreExists reports whether the store id exists.
func (c *Client) StoreExists(ctx context.Context, id string) (bool, error) {
	_, ok, err := c.StoreName(ctx, id)
	return ok, err
}

// StoreName returns the name of the store id, and whether it exists (a
// deleted store does not: OpenFGA's delete is soft, GetStore hides it).
func (c *Client) StoreName(ctx context.Context, id string) (string, bool, error) {
	if c.rpc != nil {
		resp, err := c.rpc.GetStore(ctx, &openfgav1.GetStoreRequest{StoreId: id})
		if err != nil {
			if rpcNotFound(err) {
				return "", false, nil
			}
			return "", false, fmt.Errorf("getting store %s: %w", id, err)
		}
		return resp.GetName(), true, nil
	}
	st, resp, err := c.api.OpenFgaApi.GetStore(ctx, id).Execute()
	if err == nil {
		return st.Name, true, nil
	}
	if notFound(resp, err) {
		return "", false, nil
	}
	return "", false, fmt.Errorf("getting store %s: %w", id, err)
}

// CreateStore creates a store named name and returns its id.
func (c *Client) CreateStore(ctx context.Context, name string) (string, error) {
	if c.rpc != nil {
		resp, err := c.rpc.CreateStore(ctx, &openfgav1.CreateStoreRequest{Name: name})
		if err != nil {
			return "", fmt.Errorf("creating store %s: %w", name, err)
		}
		return resp.GetId(), nil
	}
	s, _, err := c.api.OpenFgaApi.CreateStore(ctx).Body(openfga.CreateStoreRequest{Name: name}).Execute()
	if err != nil {
		return "", fmt.Errorf("creating store %s: %w", name, err)
	}
	return s.Id, nil
}

// DeleteStore deletes a store; a store already gone is no error.
func (c *Client) DeleteStore(ctx context.Context, id string) error {
	if c.rpc != nil {
		if _, err := c.rpc.DeleteStore(ctx, &openfgav1.DeleteStoreRequest{StoreId: id}); err != nil && !rpcNotFound(err) {
			return fmt.Errorf("deleting store %s: %w", id, err)
		}
		return nil
	}
	resp, err := c.api.OpenFgaApi.DeleteStore(ctx, id).Execute()
	if err != nil && !notFound(resp, err) {
		return fmt.Errorf("deleting store %s: %w", id, err)
	}
	return nil
}

// Store is one OpenFGA store.
type Store struct{ ID, Name string }

// ListStores lists every store.
func (c *Client) ListStores(ctx context.Context) ([]Store, error) {
	page := c.storesHTTP
	if c.rpc != nil {
		page = c.storesRPC
	}
	out, err := allPages(func(token string) ([]Store, string, error) { return page(ctx, token) })
	if err != nil {
		return nil, fmt.Errorf("listing stores: %w", err)
	}
	return out, nil
}

// allPages collects the items of every page, asking for the first with
// token "" and for each next one with the token the previous page gave,
// until one gives none.
func allPages[T any](page func(token string) ([]T, string, error)) ([]T, error) {
	var out []T
	for token := ""; ; {
		items, next, err := page(token)
		if err != nil {
			return nil, err
		}
		out = append(out, items...)
		if next == "" {
			return out, nil
		}
		token = next
	}
}

// storesHTTP and storesRPC return one page of stores and the next page's
// token ("" after the last).
func (c *Client) storesHTTP(ctx context.Context, token string) ([]Store, string, error) {
	req := c.api.OpenFgaApi.ListStores(ctx).PageSize(pageSize)
	if token != "" {
		req = req.ContinuationToken(token)
	}
	resp, _, err := req.Execute()
	if err != nil {
		return nil, "", err
	}
	out := make([]Store, 0, len(resp.Stores))
	for _, s := range resp.Stores {
		out = append(out, Store{ID: s.Id, Name: s.Name})
	}
	return out, resp.ContinuationToken, nil
}

func (c *Client) storesRPC(ctx context.Context, token string) ([]Store, string, error) {
	resp, err := c.rpc.ListStores(ctx, &openfgav1.ListStoresRequest{PageSize: wrapperspb.Int32(pageSize), ContinuationToken: token})
	if err != nil {
		return nil, "", err
	}
	out := make([]Store, 0, len(resp.GetStores()))
	for _, s := range resp.GetStores() {
		out = append(out, Store{ID: s.GetId(), Name: s.GetName()})
	}
	return out, resp.GetContinuationToken(), nil
}

// Model reads model id of a store; nil when it does not exist.
func (c *Client) Model(ctx context.Context, storeID, id string) (*openfgav1.AuthorizationModel, error) {
	if c.rpc != nil {
		resp, err := c.rpc.ReadAuthorizationModel(ctx, &openfgav1.ReadAuthorizationModelRequest{StoreId: storeID, Id: id})
		if err != nil {
			if rpcNotFound(err) {
				return nil, nil
			}
			return nil, fmt.Errorf("reading model %s of store %s: %w", id, storeID, err)
		}
		return resp.GetAuthorizationModel(), nil
	}
	resp, httpResp, err := c.api.OpenFgaApi.ReadAuthorizationModel(ctx, storeID, id).Execute()
	if err != nil {
		if notFound(httpResp, err) {
			return nil, nil
		}
		return nil, fmt.Errorf("reading model %s of store %s: %w", id, storeID, err)
	}
	if resp.AuthorizationModel == nil {
		return nil, nil
	}
	raw, err := json.Marshal(resp.AuthorizationModel)
	if err != nil {
		return nil, err
	}
	m := &openfgav1.AuthorizationModel{}
	if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(raw, m); err != nil {
		return nil, fmt.Errorf("decoding model %s: %w", id, err)
	}
	return m, nil
}

// SameModel reports whether two models define the same thing (ids aside).
func SameModel(a, b *openfgav1.AuthorizationModel) bool {
	if a == nil || b == nil {
		return a == b
	}
	a, b = proto.Clone(a).(*openfgav1.AuthorizationModel), proto.Clone(b).(*openfgav1.AuthorizationModel)
	a.Id, b.Id = "", ""
	if len(a.Conditions) == 0 {
		a.Conditions = nil
	}
	if len(b.Conditions) == 0 {
		b.Conditions = nil
	}
	return proto.Equal(a, b)
}

// LatestModelID is the id of the store's newest model ("" when it has none).
func (c *Client) LatestModelID(ctx context.Context, storeID string) (string, error) {
	if c.rpc != nil {
		resp, err := c.rpc.ReadAuthorizationModels(ctx, &openfgav1.ReadAuthorizationModelsRequest{StoreId: storeID, PageSize: wrapperspb.Int32(1)})
		if err != nil {
			return "", fmt.Errorf("reading the models of store %s: %w", storeID, err)
		}
		if ms := resp.GetAuthorizationModels(); len(ms) > 0 {
			return ms[0].GetId(), nil
		}
		return "", nil
	}
	resp, _, err := c.api.OpenFgaApi.ReadAuthorizationModels(ctx, storeID).PageSize(1).Execute()
	if err != nil {
		return "", fmt.Errorf("reading the models of store %s: %w", storeID, err)
	}
	if len(resp.AuthorizationModels) == 0 {
		return "", nil
	}
	return resp.AuthorizationModels[0].Id, nil
}

// WriteModelIfChanged writes model unless the store's model currentID (its
// newest model when currentID is "") already is the same; it returns the
// id of the store's model and whether it wrote one.
func (c *Client) WriteModelIfChanged(ctx context.Context, storeID, currentID string, model *openfgav1.AuthorizationModel) (string, bool, error) {
	h, err := modelHash(model)
	if err != nil {
		return "", false, err
	}
	c.mu.Lock()
	last, known := c.written[storeID]
	c.mu.Unlock()
	if known && currentID != "" && last.id == currentID && last.hash == h {
		return currentID, false, nil
	}
	if currentID == "" {
		latest, err := c.LatestModelID(ctx, storeID)
		if err != nil {
			return "", false, err
		}
		currentID = latest
	}
	if currentID != "" {
		current, err := c.Model(ctx, storeID, currentID)
		if err != nil {
			return "", false, err
		}
		if SameModel(current, model) {
			c.remember(storeID, currentID, h)
			return currentID, false, nil
		}
	}
	id, err := c.writeModel(ctx, storeID, model)
	if err != nil {
		return "", false, fmt.Errorf("writing model to store %s: %w", storeID, err)
	}
	c.remember(storeID, id, h)
	return id, true, nil
}

// writeModel makes one WriteAuthorizationModel call and returns the new
// model's id.
func (c *Client) writeModel(ctx context.Context, storeID string, model *openfgav1.AuthorizationModel) (string, error) {
	if c.rpc != nil {
		resp, err := c.rpc.WriteAuthorizationModel(ctx, &openfgav1.WriteAuthorizationModelRequest{StoreId: storeID,
			SchemaVersion: model.GetSchemaVersion(), TypeDefinitions: model.GetTypeDefinitions(), Conditions: model.GetConditions()})
		if err != nil {
			return "", err
		}
		return resp.GetAuthorizationModelId(), nil
	}
	raw, err := protojson.Marshal(model)
	if err != nil {
		return "", err
	}
	var body openfga.WriteAuthorizationModelRequest
	if err := json.Unmarshal(raw, &body); err != nil {
		return "", fmt.Errorf("encoding model: %w", err)
	}
	resp, _, err := c.api.OpenFgaApi.WriteAuthorizationModel(ctx, storeID).Body(body).Execute()
	if err != nil {
		return "", err
	}
	return resp.AuthorizationModelId, nil
}

// modelOf is the id of the model this client last wrote to (or found
// current in) the store; nil when it knows none.
func (c *Client) modelOf(storeID string) *string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if m, ok := c.written[storeID]; ok && m.id != "" {
		id := m.id
		return &id
	}
	return nil
}

// Write adds and deletes tuples; tuples already there (or already gone)
// are no error. Large sets go in several calls. Writes name the store's
// model when this client knows it, which spares OpenFGA looking up the
// store's latest model for each call.
func (c *Client) Write(ctx context.Context, storeID string, add, remove []v1alpha1.Tuple) error {
	model := c.modelOf(storeID)
	// OpenFGA refuses a call that names one tuple twice.
	add, remove = unique(add), unique(remove)
	for len(add) > 0 {
		n := min(len(add), maxTuplesPerWrite)
		if err := c.writeChunk(ctx, storeID, model, add[:n], nil); err != nil {
			return fmt.Errorf("writing %d tuples to store %s: %w", n, storeID, err)
		}
		add = add[n:]
	}
	for len(remove) > 0 {
		n := min(len(remove), maxTuplesPerWrite)
		if err := c.writeChunk(ctx, storeID, model, nil, remove[:n]); err != nil {
			return fmt.Errorf("deleting %d tuples from store %s: %w", n, storeID, err)
		}
		remove = remove[n:]
	}
	return nil
}

// writeChunk makes one write call, over gRPC when the client has it.
func (c *Client) writeChunk(ctx context.Context, storeID string, model *string, add, remove []v1alpha1.Tuple) error {
	if c.rpc != nil {
		return c.writeRPC(ctx, storeID, model, add, remove)
	}
	ignore := "ignore"
	req := openfga.WriteRequest{AuthorizationModelId: model}
	if len(add) > 0 {
		keys := make([]openfga.TupleKey, 0, len(add))
		for _, t := range add {
			keys = append(keys, openfga.TupleKey{Object: t.Object, Relation: t.Relation, User: t.User})
		}
		req.Writes = &openfga.WriteRequestWrites{TupleKeys: keys, OnDuplicate: &ignore}
	}
	if len(remove) > 0 {
		keys := make([]openfga.TupleKeyWithoutCondition, 0, len(remove))
		for _, t := range remove {
			keys = append(keys, openfga.TupleKeyWithoutCondition{Object: t.Object, Relation: t.Relation, User: t.User})
		}
		req.Deletes = &openfga.WriteRequestDeletes{TupleKeys: keys, OnMissing: &ignore}
	}
	_, _, err := c.api.OpenFgaApi.Write(ctx, storeID).Body(req).Execute()
	return err
}

func unique(ts []v1alpha1.Tuple) []v1alpha1.Tuple {
	seen := make(map[v1alpha1.Tuple]bool, len(ts))
	out := ts[:0:0]
	for _, t := range ts {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

// Read returns the tuples of object ("type:id"), of every object of a
// type ("type:"), or of the whole store (""), in a store; none when the
// store does not exist.
func (c *Client) Read(ctx context.Context, storeID, object string) ([]v1alpha1.Tuple, error) {
	page := c.readHTTP
	if c.rpc != nil {
		page = c.readRPC
	}
	out, err := allPages(func(token string) ([]v1alpha1.Tuple, string, error) { return page(ctx, storeID, object, token) })
	if err != nil {
		return nil, fmt.Errorf("reading tuples of %s in store %s: %w", object, storeID, err)
	}
	return out, nil
}

// readHTTP and readRPC return one page of tuples and the next page's
// token ("" after the last); a store that does not exist has none.
func (c *Client) readHTTP(ctx context.Context, storeID, object, token string) ([]v1alpha1.Tuple, string, error) {
	size := int32(pageSize)
	body := openfga.ReadRequest{PageSize: &size}
	if object != "" {
		body.TupleKey = &openfga.ReadRequestTupleKey{Object: &object}
	}
	if token != "" {
		body.ContinuationToken = &token
	}
	resp, httpResp, err := c.api.OpenFgaApi.Read(ctx, storeID).Body(body).Execute()
	if err != nil {
		if notFound(httpResp, err) {
			return nil, "", nil
		}
		return nil, "", err
	}
	out := make([]v1alpha1.Tuple, 0, len(resp.Tuples))
	for _, t := range resp.Tuples {
		out = append(out, v1alpha1.Tuple{Object: t.Key.Object, Relation: t.Key.Relation, User: t.Key.User})
	}
	return out, resp.ContinuationToken, nil
}

func (c *Client) readRPC(ctx context.Context, storeID, object, token string) ([]v1alpha1.Tuple, string, error) {
	req := &openfgav1.ReadRequest{StoreId: storeID, PageSize: wrapperspb.Int32(pageSize), ContinuationToken: token}
	if object != "" {
		req.TupleKey = &openfgav1.ReadRequestTupleKey{Object: object}
	}
	resp, err := c.rpc.Read(ctx, req)
	if err != nil {
		if rpcNotFound(err) {
			return nil, "", nil
		}
		return nil, "", err
	}
	out := make([]v1alpha1.Tuple, 0, len(resp.GetTuples()))
	for _, t := range resp.GetTuples() {
		k := t.GetKey()
		out = append(out, v1alpha1.Tuple{Object: k.GetObject(), Relation: k.GetRelation(), User: k.GetUser()})
	}
	return out, resp.GetContinuationToken(), nil
}

// Check asks whether user has relation to object in a store, bypassing
// OpenFGA's check caches (HIGHER_CONSISTENCY), so the answer reflects the
// tuples written so far.
func (c *Client) Check(ctx context.Context, storeID string, t v1alpha1.Tuple) (bool, error) {
	return c.CheckContextual(ctx, storeID, t, nil)
}

// CheckContextual is Check with contextual tuples (as the webhook sends
// the object -> namespace -> account chain).
func (c *Client) CheckContextual(ctx context.Context, storeID string, t v1alpha1.Tuple, contextual []v1alpha1.Tuple) (bool, error) {
	consistency := openfga.CONSISTENCYPREFERENCE_HIGHER_CONSISTENCY
	body := openfga.CheckRequest{
		TupleKey:    openfga.CheckRequestTupleKey{Object: t.Object, Relation: t.Relation, User: t.User},
		Consistency: &consistency,
	}
	if len(contextual) > 0 {
		keys := make([]openfga.TupleKey, 0, len(contextual))
		for _, ct := range contextual {
			keys = append(keys, openfga.TupleKey{Object: ct.Object, Relation: ct.Relation, User: ct.User})
		}
		body.ContextualTuples = &openfga.ContextualTupleKeys{TupleKeys: keys}
	}
	resp, _, err := c.api.OpenFgaApi.Check(ctx, storeID).Body(body).Execute()
	if err != nil {
		return false, fmt.Errorf("checking %s in store %s: %w", t, storeID, err)
	}
	return resp.GetAllowed(), nil
}
