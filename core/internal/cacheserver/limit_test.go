package cacheserver

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestInFlightLimit: over its budget the cache server answers 429 with
// Retry-After; watches are not counted; a freed slot serves again.
func TestInFlightLimit(t *testing.T) {
	release, entered := make(chan struct{}), make(chan struct{}, 4)
	h := WithInFlightLimit(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		<-release
	}), 1, 1)
	serve := func(method, target string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(method, target, nil))
		return rec
	}
	done := make(chan int, 3)
	go func() { done <- serve(http.MethodGet, "/services/cache/x").Code }()
	go func() { done <- serve(http.MethodPut, "/services/cache/x").Code }()
	<-entered
	<-entered
	if rec := serve(http.MethodGet, "/services/cache/x"); rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") == "" {
		t.Errorf("a read over the budget: %d, Retry-After %q; want 429 with Retry-After", rec.Code, rec.Header().Get("Retry-After"))
	}
	if rec := serve(http.MethodDelete, "/services/cache/x"); rec.Code != http.StatusTooManyRequests {
		t.Errorf("a write over the budget: %d, want 429", rec.Code)
	}
	go func() { done <- serve(http.MethodGet, "/services/cache/x?watch=true").Code }()
	<-entered
	close(release)
	for range 3 {
		if code := <-done; code != http.StatusOK {
			t.Errorf("a request within the budget (or a watch): %d", code)
		}
	}
	if rec := serve(http.MethodGet, "/services/cache/x"); rec.Code != http.StatusOK {
		t.Errorf("a read after the slots freed: %d", rec.Code)
	}
}
