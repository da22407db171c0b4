package builtin

import (
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
)

func TestValidateTokenRequest(t *testing.T) {
	seconds := func(s int64) *int64 { return &s }
	for _, tt := range []struct {
		name    string
		spec    authenticationv1.TokenRequestSpec
		wantErr string
	}{
		{"an hour", authenticationv1.TokenRequestSpec{ExpirationSeconds: seconds(3600)}, ""},
		{"ten minutes, the shortest", authenticationv1.TokenRequestSpec{ExpirationSeconds: seconds(600)}, ""},
		{"a minute", authenticationv1.TokenRequestSpec{ExpirationSeconds: seconds(60)}, "less than 10 minutes"},
		{"beyond 2^32 seconds", authenticationv1.TokenRequestSpec{ExpirationSeconds: seconds(1<<32 + 1)}, "larger than 2^32 seconds"},
		{"bound to a Secret", authenticationv1.TokenRequestSpec{ExpirationSeconds: seconds(3600),
			BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Secret", APIVersion: "v1", Name: "s"}}, ""},
		{"bound to a Pod (none here)", authenticationv1.TokenRequestSpec{ExpirationSeconds: seconds(3600),
			BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: "p"}}, "Unsupported value"},
		{"bound to a Secret without a name", authenticationv1.TokenRequestSpec{ExpirationSeconds: seconds(3600),
			BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Secret"}}, "Required value"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			errs := validateTokenRequest(&authenticationv1.TokenRequest{Spec: tt.spec})
			got := errs.ToAggregate()
			switch {
			case tt.wantErr == "" && got != nil:
				t.Errorf("errors %v, want none", got)
			case tt.wantErr != "" && (got == nil || !strings.Contains(got.Error(), tt.wantErr)):
				t.Errorf("errors %v, want one mentioning %q", got, tt.wantErr)
			}
		})
	}
}
