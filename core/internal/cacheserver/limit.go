package cacheserver

import (
	"net/http"
	"strconv"
)

// WithInFlightLimit bounds the cache server's requests in flight: at most
// reads lists and gets, and writes puts and deletes, at once (0: no
// bound); over it a request gets 429 with Retry-After, which the writers
// retry. Watches are long-running and not counted (as in kube). The root
// shard's own limits exempt system:masters, the cache server's only
// users, so the cache server has its own budget of the same sizes.
func WithInFlightLimit(next http.Handler, reads, writes int) http.Handler {
	readSlots, writeSlots := slots(reads), slots(writes)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query().Get("watch")
		if r.Method == http.MethodGet && (q == "true" || q == "1") {
			next.ServeHTTP(w, r)
			return
		}
		s := readSlots
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			s = writeSlots
		}
		if s == nil {
			next.ServeHTTP(w, r)
			return
		}
		select {
		case s <- struct{}{}:
			defer func() { <-s }()
			next.ServeHTTP(w, r)
		default:
			w.Header().Set("Retry-After", strconv.Itoa(1))
			status(w, http.StatusTooManyRequests, "TooManyRequests", "the cache server has too many requests in flight, please try again later")
		}
	})
}

func slots(n int) chan struct{} {
	if n <= 0 {
		return nil
	}
	return make(chan struct{}, n)
}
