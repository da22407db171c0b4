package options

import (
	"strings"
	"testing"
)

func TestValidate(t *testing.T) {
	o := New()
	if errs := o.Validate(); len(errs) != 0 {
		t.Fatalf("defaults must be valid, got %v", errs)
	}
	o.BindAddress = "not-an-ip"
	o.SecurePort = 70000
	o.TokenAuthFile = "/does/not/exist"
	errs := o.Validate()
	if len(errs) != 3 {
		t.Fatalf("want 3 errors, got %v", errs)
	}
	for _, want := range []string{"--bind-address", "--secure-port", "--token-auth-file"} {
		found := false
		for _, e := range errs {
			found = found || strings.Contains(e.Error(), want)
		}
		if !found {
			t.Errorf("no error mentions %s: %v", want, errs)
		}
	}
}

func TestCompleteExternalAddress(t *testing.T) {
	o := New()
	o.SecurePort = 7000
	c, err := o.Complete()
	if err != nil {
		t.Fatal(err)
	}
	if c.ExternalAddress != "127.0.0.1:7000" {
		t.Errorf("ExternalAddress = %q", c.ExternalAddress)
	}
	o.ExternalHostname = "example.com"
	c, _ = o.Complete()
	if c.ExternalAddress != "example.com:7000" {
		t.Errorf("ExternalAddress = %q", c.ExternalAddress)
	}
}
