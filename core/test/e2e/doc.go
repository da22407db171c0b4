// Package e2e holds end-to-end tests that run the meshplane binary and talk to
// it with kubectl, client-go, controller-runtime and net/http.
//
// Run them with `go test ./test/e2e/ -v -timeout 30m` from core/ (set
// MESHPLANE_BIN to test a prebuilt binary; see package framework for the
// other environment variables).
package e2e
