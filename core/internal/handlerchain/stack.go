package handlerchain

import (
	"net/http"

	apirequest "k8s.io/apiserver/pkg/endpoints/request"
)

// stackFrame is the frame growStack takes: with the few frames above it
// the goroutine's stack grows once to 32 KiB, which a create or a GET
// through the whole chain stays within.
const stackFrame = 16 << 10

// withGrownStack grows the stack of the goroutine that serves a request
// that is not long-running to its working size in one step, while it is
// still shallow. Each request runs on a new HTTP/2 handler goroutine that
// starts with a small stack (Go sizes it by the average goroutine, most
// of them idle), and the chain, the handlers and the storage below them
// otherwise grow it in four or five doublings, each copying the deep stack
// and adjusting every frame: about 5 % of the server's CPU under creates.
// Long-running requests (watches) keep the usual growth: their goroutines
// live long and would hold the larger stack until the garbage collector
// shrinks it.
func withGrownStack(h http.Handler, longRunning apirequest.LongRunningRequestCheck) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if info, ok := apirequest.RequestInfoFrom(req.Context()); ok && (longRunning == nil || !longRunning(req, info)) {
			growStack()
		}
		h.ServeHTTP(w, req)
	})
}

// growStack takes a stackFrame frame, which makes the runtime grow the
// goroutine's stack to fit it; the stack stays grown after the return.
//
//go:noinline
func growStack() {
	var frame [stackFrame]byte
	keepOnStack(frame[:])
}

// keepOnStack keeps growStack's frame from being optimised away; it does
// not retain b, so the frame stays on the stack.
//
//go:noinline
func keepOnStack(b []byte) {}
