package securityoperator

import (
	"strings"
	"testing"
)

func TestValidate(t *testing.T) {
	ok := func() *Options {
		o := NewOptions()
		o.OpenFGAURL = "http://127.0.0.1:8080"
		return o
	}
	if err := ok().Validate(); err != nil {
		t.Fatalf("defaults with an OpenFGA URL: %v", err)
	}
	for name, tc := range map[string]struct {
		change func(*Options)
		want   string
	}{
		"no OpenFGA":         {func(o *Options) { o.OpenFGAURL = "" }, "--openfga-url"},
		"OpenFGA gRPC":       {func(o *Options) { o.OpenFGAURL = "127.0.0.1:8081" }, "--openfga-url"},
		"type without path":  {func(o *Options) { o.WorkspaceType = "security" }, "--workspace-type"},
		"type without name":  {func(o *Options) { o.WorkspaceType = "root:" }, "--workspace-type"},
		"workspace is a URL": {func(o *Options) { o.Workspace = "https://x/clusters/root" }, "--workspace"},
		"no workers":         {func(o *Options) { o.Workers = 0 }, "--workers"},
		"no endpoint slice":  {func(o *Options) { o.EndpointSlice = "" }, "--kcp-api-export-endpoint-slice-name"},
		"gRPC as a URL":      {func(o *Options) { o.OpenFGAGRPC = "http://127.0.0.1:8081" }, "--openfga-grpc-addr"},
		"orgs as root":       {func(o *Options) { o.OrgsWorkspace = "root" }, "--orgs-workspace"},
		"unknown org stores": {func(o *Options) { o.OrganizationStores = "one" }, "--organization-stores"},
	} {
		o := ok()
		tc.change(o)
		err := o.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one naming %s", name, err, tc.want)
		}
	}
}
