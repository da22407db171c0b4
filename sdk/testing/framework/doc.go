// Package framework is Meshplane's test kit: it starts a meshplane core (or
// connects to a running one) and offers the helpers every module's
// end-to-end tests share: clients and kubeconfigs per logical cluster and
// user, kubectl and the kubectl-ws plugin, workspaces and WorkspaceTypes,
// APIExports and APIBindings, virtual workspace configs, an initializer or
// terminator over the lifecycle virtual workspaces (LifecycleController),
// Eventually, UniqueName and require-style assertions. It depends on client-go, apimachinery and
// kcp-dev/sdk only, never on the core module.
//
// A package's tests share one server:
//
//	func TestMain(m *testing.M) { os.Exit(framework.RunMain(m)) }
//
//	func TestX(t *testing.T) {
//		s := framework.SharedServer(t)
//		org := s.CreateOrg(t, "x")
//		...
//	}
//
// Outside tests, Start starts a core and returns an error instead of failing
// a test; Process, StartShell and WaitReady launch any other program.
//
// RunWalkthrough runs the ```sh blocks of a README as one bash script, so a
// walk-through's commands are tested as a user would paste them.
//
// A sharded install: StartShards starts a root shard, shard b and the
// front proxy (NewProxyPKI, StartFrontProxy, FrontProxy.Server for the
// kit's view through it); PinnedWorkspace, CreatePinnedWorkspace and
// WaitWorkspaceReady place workspaces on a shard.
//
// A throwaway PostgreSQL server for a test is sdk/testing/postgres
// (initdb + postgres on a free port, a superuser DSN, stopped by PID).
//
// Binaries are found by Binary(name, module, pkg): $<NAME>_BIN, else
// <repo root>/bin/<name>, else `go build` in the owning module, once per
// process (the repo root is the directory holding go.work).
//
// External mode runs the same tests against an already running core or
// platform: SharedServer connects to it instead of starting a process, and
// tests that need a process of their own (restart, durability, audit) skip.
//
// Environment variables:
//
//	MESHPLANE_BIN                 the meshplane binary (see Binary; likewise KUBECTL_WS_BIN,
//	                              APIGEN_BIN, MESHPLANE_BENCH_BIN, any <NAME>_BIN)
//	MESHPLANE_EXTERNAL_KUBECONFIG external mode: the admin kubeconfig of a running core
//	                              (contexts root, base and shard-base)
//	MESHPLANE_PLATFORM_ENV        external mode: a platform.env file of shell KEY=value lines,
//	                              KUBECONFIG= (the admin kubeconfig), CORE_URL= (optional, else
//	                              from the kubeconfig) and other components' *_URL= lines
//	MESHPLANE_EXTERNAL_TOKEN_USERS external mode: the core's --token-auth-file (token,user,uid,
//	                              "groups"); its users (alice, bob, ...) are known to the tests
//	MESHPLANE_E2E_START_TIMEOUT   how long to wait for /readyz (Go duration, default 3m)
//	MESHPLANE_E2E_ARGS            extra arguments appended to `meshplane start` (space separated)
//	MESHPLANE_E2E_KEEP            if set to a non-empty value, root directories are never removed
//	KUBECTL                       kubectl binary (default: kubectl from PATH)
package framework
