package fgaclient_test

import (
	"context"
	"net/http"
	"testing"

	openfgav1 "github.com/openfga/api/proto/openfga/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/meshplane/meshplane/operators/fgaclient"
	"github.com/meshplane/meshplane/sdk/testing/openfga"
)

// TestPresharedKey: an OpenFGA started with a preshared key (from a key
// file, as the launcher starts it) refuses calls without the key on its
// HTTP and gRPC ports; the client with the key works over both.
func TestPresharedKey(t *testing.T) {
	const key = "4f1c0d8e9a7b6c5d4e3f2a1b0c9d8e7f"
	srv := openfga.Start(t, openfga.Options{PresharedKey: key})
	ctx := context.Background()

	resp, err := http.Get(srv.URL + "/stores")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("GET /stores without the key: %d, want 401", resp.StatusCode)
	}
	conn, err := grpc.NewClient(srv.GRPC, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// OpenFGA answers with its own code for a missing bearer token.
	if _, err := openfgav1.NewOpenFGAServiceClient(conn).ListStores(ctx, &openfgav1.ListStoresRequest{}); status.Code(err) != codes.Code(openfgav1.AuthErrorCode_bearer_token_missing) {
		t.Errorf("gRPC ListStores without the key: %v, want bearer_token_missing", err)
	}
	for name, opts := range map[string][]fgaclient.Option{"no key": nil, "wrong key": {fgaclient.WithPresharedKey("not-" + key)}} {
		for _, overGRPC := range []bool{false, true} {
			c := newClient(t, srv, overGRPC, opts...)
			if _, err := c.ListStores(ctx); err == nil {
				t.Errorf("%s (gRPC %v): ListStores succeeded", name, overGRPC)
			}
		}
	}

	for _, overGRPC := range []bool{false, true} {
		c := newClient(t, srv, overGRPC, fgaclient.WithPresharedKey(key))
		id, err := c.CreateStore(ctx, "keyed")
		if err != nil {
			t.Fatalf("with the key (gRPC %v): %v", overGRPC, err)
		}
		if ok, err := c.StoreExists(ctx, id); err != nil || !ok {
			t.Fatalf("with the key (gRPC %v): store exists = %v, %v", overGRPC, ok, err)
		}
	}
}

func newClient(t *testing.T, srv *openfga.Server, overGRPC bool, opts ...fgaclient.Option) *fgaclient.Client {
	t.Helper()
	c, err := fgaclient.New(srv.URL, opts...)
	if err != nil {
		t.Fatal(err)
	}
	if overGRPC {
		if err := c.UseGRPC(srv.GRPC); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
	}
	return c
}
