package builtin

import (
	"math"
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
		{"2^32 seconds, the longest", authenticationv1.TokenRequestSpec{ExpirationSeconds: seconds(1 << 32)}, ""},
		// As a time.Duration these wrap around into the allowed range.
		{"9999999999999 seconds (overflows a Duration)", authenticationv1.TokenRequestSpec{ExpirationSeconds: seconds(9999999999999)}, "larger than 2^32 seconds"},
		{"the largest int64", authenticationv1.TokenRequestSpec{ExpirationSeconds: seconds(math.MaxInt64)}, "larger than 2^32 seconds"},
		{"negative", authenticationv1.TokenRequestSpec{ExpirationSeconds: seconds(-1)}, "less than 10 minutes"},
		{"the smallest int64", authenticationv1.TokenRequestSpec{ExpirationSeconds: seconds(math.MinInt64)}, "less than 10 minutes"},
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

func TestCapExpiration(t *testing.T) {
	for _, tt := range []struct {
		name               string
		seconds, max, want int64
	}{
		{"no maximum", 1 << 32, 0, 1 << 32},
		{"below the maximum", 3600, 86400, 3600},
		{"at the maximum", 86400, 86400, 86400},
		{"above the maximum", 1 << 32, 86400, 86400},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := capExpiration(tt.seconds, tt.max); got != tt.want {
				t.Errorf("capExpiration(%d, %d) = %d, want %d", tt.seconds, tt.max, got, tt.want)
			}
		})
	}
}
