package framework

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// RequireContains fails unless got contains want; what names the check.
func RequireContains(t testing.TB, got, want, what string) {
	t.Helper()
	if !strings.Contains(got, want) {
		t.Fatalf("%s: expected output to contain %q, got:\n%s", what, want, got)
	}
}

// RequireContainsFold is RequireContains ignoring case.
func RequireContainsFold(t testing.TB, got, want, what string) {
	t.Helper()
	if !strings.Contains(strings.ToLower(got), strings.ToLower(want)) {
		t.Fatalf("%s: expected output to contain %q (any case), got:\n%s", what, want, got)
	}
}

// RequireEqual fails unless got == want.
func RequireEqual[T comparable](t testing.TB, got, want T, what string) {
	t.Helper()
	if got != want {
		t.Fatalf("%s: got %v, want %v", what, got, want)
	}
}

// RequireFails checks that a kubectl run failed and that its stderr
// mentions each of wants (case-insensitively).
func RequireFails(t testing.TB, stdout, stderr string, err error, what string, wants ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: expected kubectl to fail, it succeeded with stdout:\n%s\nstderr:\n%s", what, stdout, stderr)
	}
	for _, w := range wants {
		if !strings.Contains(strings.ToLower(stderr), strings.ToLower(w)) {
			t.Fatalf("%s: expected kubectl's error to mention %q, got stderr:\n%s\nstdout:\n%s", what, w, stderr, stdout)
		}
	}
}

// RequireCode fails unless the response has one of the codes.
func RequireCode(t testing.TB, r *Response, what string, codes ...int) {
	t.Helper()
	if r.Err != nil {
		t.Fatalf("%s: expected HTTP %v, got %s", what, codes, r)
	}
	for _, c := range codes {
		if r.Code == c {
			return
		}
	}
	t.Fatalf("%s: expected HTTP %v, got %s", what, codes, r)
}

// RequireStatus fails unless the response is a Status with the code and
// (when non-empty) reason.
func RequireStatus(t testing.TB, r *Response, what string, code int, reason string) {
	t.Helper()
	RequireCode(t, r, what, code)
	st := r.Status(t)
	if st.Code != 0 && int(st.Code) != code {
		t.Fatalf("%s: Status.code is %d but the HTTP code is %d: %s", what, st.Code, code, r)
	}
	if reason != "" && string(st.Reason) != reason {
		t.Fatalf("%s: expected Status reason %q, got %q: %s", what, reason, st.Reason, r)
	}
}

// MustJSON marshals v, failing the test on error.
func MustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// ErrString renders an error for failure messages, with the HTTP code and
// reason of an API status error; nil is "<nil>".
func ErrString(err error) string {
	if err == nil {
		return "<nil>"
	}
	var st apierrors.APIStatus
	if errors.As(err, &st) {
		return fmt.Sprintf("%v (HTTP %d, reason %s)", err, st.Status().Code, st.Status().Reason)
	}
	return err.Error()
}
