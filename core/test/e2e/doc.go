// Package e2e holds end-to-end tests that run the meshplane binary and talk to
// it with kubectl, client-go, controller-runtime and net/http. They live in
// one package per feature, each sharing one server (started by the test kit,
// github.com/meshplane/meshplane/sdk/testing/framework), so that
// `go test ./test/e2e/...` runs the features in parallel:
//
//	apis        API sharing: APIExports, APIBindings, the APIExport virtual workspace
//	workspaces  the workspace tree, kubectl ws, types, initializers and terminators
//	kubectl     kubectl against a logical cluster, the admin kubeconfig
//	resources   namespaces, CRDs, client-go and controller-runtime clients
//	authz       RBAC per cluster, isolation between clusters, bad input
//	storage     durability, restart and the audit log (each test starts its own server)
//	fidelity    kcp behaviours kcp's clients and tests rely on (server-side apply of kcp kinds, ...)
//	tenancy     two tenants attacking each other: impersonation, system-only fields, paths
//
// Run them with `go test ./test/e2e/... -timeout 30m` from core/ (set
// MESHPLANE_BIN to test a prebuilt binary, or MESHPLANE_EXTERNAL_KUBECONFIG to
// test a running core; see the test kit for the other environment variables).
package e2e
