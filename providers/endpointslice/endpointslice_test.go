package endpointslice

import (
	"testing"

	apisv1alpha1 "github.com/kcp-dev/sdk/apis/apis/v1alpha1"
	"k8s.io/client-go/rest"
)

func TestURLs(t *testing.T) {
	s := &apisv1alpha1.APIExportEndpointSlice{}
	if got := URLs(s); len(got) != 0 {
		t.Fatalf("a slice without endpoints has no URLs, got %v", got)
	}
	s.Status.APIExportEndpoints = []apisv1alpha1.APIExportEndpoint{{URL: ""}, {URL: "https://a/services/apiexport/x/e"}, {URL: "https://b/services/apiexport/x/e"}}
	got := URLs(s)
	if len(got) != 2 || got[0] != "https://a/services/apiexport/x/e" {
		t.Fatalf("URLs = %v, want the two non-empty URLs in order", got)
	}
}

func TestConfigForKeepsCredentials(t *testing.T) {
	cfg := &rest.Config{Host: "https://127.0.0.1:6443/clusters/root:p", BearerToken: "t", TLSClientConfig: rest.TLSClientConfig{CAData: []byte("ca")}}
	got := ConfigFor(cfg, "https://127.0.0.1:6443/services/apiexport/abc/e/")
	if got.Host != "https://127.0.0.1:6443/services/apiexport/abc/e" || got.BearerToken != "t" || string(got.CAData) != "ca" {
		t.Fatalf("ConfigFor = host %q token %q ca %q", got.Host, got.BearerToken, got.CAData)
	}
	if cfg.Host != "https://127.0.0.1:6443/clusters/root:p" {
		t.Fatalf("ConfigFor changed its input")
	}
}

func TestBaseHost(t *testing.T) {
	for in, want := range map[string]string{
		"https://h:1/clusters/root:orgs":           "https://h:1",
		"https://h:1/services/apiexport/a/b/":      "https://h:1",
		"https://h:1/":                             "https://h:1",
		"https://h:1/clusters/root/clusters/other": "https://h:1",
	} {
		if got := BaseHost(in); got != want {
			t.Errorf("BaseHost(%q) = %q, want %q", in, got, want)
		}
	}
}
