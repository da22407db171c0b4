package server

import (
	"strings"
	"testing"
)

func TestValidate(t *testing.T) {
	o := NewOptions()
	o.TLSCertFile, o.TLSPrivateKeyFile = "/does/not/exist.crt", "/does/not/exist.key"
	o.OpenFGAURL = "ftp://x"
	o.SecurePort = 0
	o.DecisionCacheTTL = -1
	err := o.Validate()
	if err == nil {
		t.Fatal("bad flags accepted")
	}
	for _, want := range []string{"--tls-cert-file", "--openfga-url", "--secure-port", "--decision-cache-ttl"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not mention %s: %v", want, err)
		}
	}
	o = NewOptions()
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "are required") {
		t.Errorf("missing TLS files and OpenFGA URL must be reported, got %v", err)
	}
}
