#!/usr/bin/env bash
# Benchmark a freshly started Meshplane server with meshplane-bench.
#
# Usage: scripts/bench.sh [extra meshplane-bench flags...]
#   e.g. scripts/bench.sh --clusters 200 --creates 1000
#   a quick smoke run of every phase:
#   scripts/bench.sh --creates 200 --gets 200 --list-size 200 --clusters 50 \
#     --workspaces 50 --bindings 5 --vw-large=false --vw-watch-consumers 20
#   the workspace memory target: scripts/bench.sh --workspaces-10k, or the
#     memory section alone (see WS_MEM_BENCH below): WS_MEM_WORKSPACES=10000 scripts/bench.sh \
#     --creates 0 --gets 0 --lists 0 --clusters 0 --workspaces 0 --bindings 0 --vw-lists 0 \
#     --vw-watch-events 0 --vw-large=false --etcd-embedded=false; CORE_BENCH=0 GW_BENCH=0 ...
#   the accounts phase alone: ACCOUNTS_ORGS=10 ACCOUNTS=50 scripts/bench.sh --creates 0 \
#     --gets 0 --lists 0 --clusters 0 --workspaces 0 --bindings 0 --vw-lists 0 \
#     --vw-watch-events 0 --vw-large=false --etcd-embedded=false; GW_BENCH=0 skips the gateway
#   extra server flags: MESHPLANE_ARGS=--embedded-etcd-in-process-client=false scripts/bench.sh
#
# Expects bin/meshplane and bin/meshplane-bench (and, for the mounts part,
# bin/kubecluster-mounts, for the front proxy bin/front-proxy), built by `make build`; this
# script builds nothing. It creates a temporary root directory, picks free
# 127.0.0.1 ports, lets meshplane-bench start the server (measuring
# start-to-ready and RSS), run all phases (configmaps, logical clusters, kcp
# workspaces and API sharing) plus the embedded-etcd ceiling and
# stop the server, tees the Markdown table to bench-results.md in the
# repository root (not meant to be committed), and removes the temporary
# directory. Progress is printed on stderr. Exit status is meshplane-bench's.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
# shellcheck source=lib.sh
. "$ROOT/scripts/lib.sh"

for bin in bin/meshplane bin/meshplane-bench; do
	if [[ ! -x $bin ]]; then
		echo "bench.sh: $bin not found; run 'make build' first" >&2
		exit 1
	fi
done

DIR=$(mktemp -d "${TMPDIR:-/tmp}/meshplane-bench.XXXXXX")
trap 'rm -rf "$DIR"' EXIT

# free_port prints a random 127.0.0.1 TCP port nothing listens on and that
# is not among the arguments. (Racy by nature, like any free-port picking.)
free_port() {
	local p i taken
	for ((i = 0; i < 200; i++)); do
		p=$((20000 + RANDOM % 40000))
		taken=0
		for u in "$@"; do [[ $u == "$p" ]] && taken=1; done
		((taken)) && continue
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			echo "$p"
			return 0
		fi
	done
	echo "bench.sh: no free port found" >&2
	return 1
}

# free_range prints a base port B such that B..B+19 are all free.
free_range() {
	local b i j busy
	for ((i = 0; i < 200; i++)); do
		b=$((20000 + (RANDOM % 2000) * 20))
		busy=0
		for ((j = 0; j < 20; j++)); do
			if (exec 3<>"/dev/tcp/127.0.0.1/$((b + j))") 2>/dev/null; then
				busy=1
				break
			fi
		done
		((busy)) || { echo "$b"; return 0; }
	done
	echo "bench.sh: no free port range found" >&2
	return 1
}

P=$(free_port)
E=$(free_port "$P")
F=$(free_port "$P" "$E")

start_cmd=$(printf '%q ' "$ROOT/bin/meshplane" start \
	--root-directory "$DIR" --bind-address 127.0.0.1 --secure-port "$P" \
	--embedded-etcd-client-port "$E" --embedded-etcd-peer-port "$F" ${MESHPLANE_ARGS:-})

{
	echo "## meshplane-bench $(date -u +%Y-%m-%dT%H:%M:%SZ) ($(git rev-parse --short HEAD 2>/dev/null || echo 'no git revision'))"
	echo
	"$ROOT/bin/meshplane-bench" \
		--start-cmd "$start_cmd" \
		--ready-url "https://127.0.0.1:$P/readyz" \
		--kubeconfig "$DIR/admin.kubeconfig" \
		--etcd-embedded \
		"$@"
} | tee bench-results.md

# Memory per Ready workspace with all of the core's machinery running
# (service accounts, root CA publisher, GC, quota, admission): a fresh core,
# WS_MEM_WORKSPACES (default 2000) flat workspaces created by
# meshplane-bench (two runs of half, 1 and 16 clients), with the RSS and the
# live Go heap after a forced GC per Ready workspace right after the burst;
# then the core is restarted on the same data and measured again at rest
# (watch caches refilled by a list: no event history of the burst),
# WS_MEM_SETTLE seconds (default 30) after it is ready. WS_MEM_BENCH=0 skips.
if [[ ${WS_MEM_BENCH:-1} != 0 ]]; then
	WSM="$DIR/wsmem"
	N=${WS_MEM_WORKSPACES:-2000}
	P=$(free_port)
	E=$(free_port "$P")
	F=$(free_port "$P" "$E")
	wsm_kubectl() { kubectl --kubeconfig "$WSM/admin.kubeconfig" --context base "$@"; }
	wsm_start() {
		start_core "$ROOT/bin/meshplane" "$WSM" "$P" "$E" "$F" "$DIR/wsmem.log" ${MESHPLANE_ARGS:-}
		WSM_PID=$CORE_PID
		wait_core "$WSM/admin.kubeconfig" && return 0
		echo "bench.sh: core not ready, log:" >&2
		tail -20 "$DIR/wsmem.log" >&2
		return 1
	}
	wsm_stop() { kill "$WSM_PID" && wait "$WSM_PID" || true; }
	# wsm_sample prints "<RSS> <live heap> <file-backed RSS>" (bytes) after
	# a pause; the file-backed part is mostly the embedded etcd's
	# memory-mapped database (and the binary).
	wsm_sample() {
		sleep "${1:-5}"
		local st="/proc/$WSM_PID/status"
		echo "$(awk '/^VmRSS/ {print $2 * 1024}' "$st") $(wsm_kubectl get --raw '/debug/pprof/heap?gc=1&debug=1' | sed -n 's/^# HeapAlloc = //p') $(awk '/^RssFile/ {print $2 * 1024}' "$st")"
	}
	kib() { awk -v a="$1" -v b="$2" -v n="$N" 'BEGIN { printf "%.1f KiB", (b - a) / 1024 / n }'; }
	mib() { awk -v a="$1" 'BEGIN { printf "%.0f MiB", a / 1048576 }'; }
	{
		echo
		echo "## memory per Ready workspace, $N workspaces $(date -u +%Y-%m-%dT%H:%M:%SZ)"
		echo
		wsm_start
		read -r rss0 heap0 file0 < <(wsm_sample 5)
		"$ROOT/bin/meshplane-bench" --kubeconfig "$WSM/admin.kubeconfig" --pid "$WSM_PID" --keep \
			--creates 0 --gets 0 --lists 0 --clusters 0 --workspaces $((N / 2)) --workspace-tree 0 \
			--bindings 0 --vw-lists 0 --vw-watch-events 0 --vw-large=false | grep -E 'RSS|heap|Ready/s' || true
		read -r rssb heapb fileb < <(wsm_sample 2)
		wsm_stop
		wsm_start
		read -r rss1 heap1 file1 < <(wsm_sample "${WS_MEM_SETTLE:-30}")
		echo "| server idle before: RSS (file-backed) / live heap | $(mib "$rss0") ($(mib "$file0")) / $(mib "$heap0") |"
		echo "| right after creating $N workspaces: RSS (file-backed) / live heap | $(mib "$rssb") ($(mib "$fileb")) / $(mib "$heapb") |"
		echo "| after the burst: RSS growth per workspace (file-backed part) | $(kib "$rss0" "$rssb") ($(kib "$file0" "$fileb")) |"
		echo "| after the burst: live heap growth per workspace | $(kib "$heap0" "$heapb") |"
		echo "| restarted over $N workspaces, at rest: RSS (file-backed) / live heap | $(mib "$rss1") ($(mib "$file1")) / $(mib "$heap1") |"
		echo "| at rest: RSS growth per workspace (file-backed part) | $(kib "$rss0" "$rss1") ($(kib "$file0" "$file1")) |"
		echo "| at rest: live heap growth per workspace | $(kib "$heap0" "$heap1") |"
		wsm_stop
	} | tee -a bench-results.md
fi

# The core's issue-8 machinery, from Go benchmarks (CORE_BENCH=0 skips):
# warm service-account token and OIDC JWT authentication (p50/p99 per
# request, in the server's authenticators), ConfigMap creates/s with no
# webhook vs one validating webhook (a real HTTPS webhook on loopback), and
# deleting an owner of 10,000 dependents until all are gone (background
# and foreground; ns/op is that time). The e2e ones start their own core
# from bin/meshplane.
if [[ ${CORE_BENCH:-1} != 0 ]]; then
	{
		echo
		echo "## core: authentication, admission webhook, garbage collection $(date -u +%Y-%m-%dT%H:%M:%SZ)"
		echo
		echo '```'
		go test -count=1 -run '^$' -bench 'WarmTokenInformer' -benchtime 20000x ./core/internal/serviceaccount/ 2>&1 |
			grep -E '^(Benchmark|FAIL|--- FAIL)' || true
		go test -count=1 -run '^$' -bench 'WarmJWT|VerifyJWT' -benchtime 20000x ./core/internal/authentication/jwt/ 2>&1 |
			grep -E '^(Benchmark|FAIL|--- FAIL)' || true
		MESHPLANE_BIN="$ROOT/bin/meshplane" go test -count=1 -run '^$' -bench 'CreateConfigMap' -benchtime "${CORE_BENCH_CREATES:-500}x" \
			./core/test/e2e/admission/ 2>&1 | grep -E '^(Benchmark|FAIL|--- FAIL)' || true
		MESHPLANE_BIN="$ROOT/bin/meshplane" go test -count=1 -timeout 30m -run '^$' -bench 'Cascade10000' -benchtime 1x \
			./core/test/e2e/gc/ 2>&1 | grep -E '^(Benchmark|FAIL|--- FAIL)' || true
		echo '```'
	} | tee -a bench-results.md
fi

# The GraphQL gateway: a list of 100 configmaps through GraphQL and over
# REST (also paired, request by request, for a ratio that a shared
# machine's load does not skew; and the REST list as protobuf, which the
# gateway reads, against JSON), schema generation with 50 bound APIs, and GW_BENCH_WORKSPACES
# (default 1000) workspaces sharing one schema. The kit starts its own core
# (bin/meshplane); the gateway runs in the test process so that its memory
# can be read. Skip with GW_BENCH=0.
if [[ ${GW_BENCH:-1} != 0 ]]; then
	{
		echo
		echo "## graphql-gateway $(date -u +%Y-%m-%dT%H:%M:%SZ)"
		echo
		echo '```'
		GW_BENCH_RUN=1 GW_BENCH_OUT="$DIR/gateway.md" MESHPLANE_BIN="$ROOT/bin/meshplane" APIGEN_BIN="$ROOT/bin/apigen" \
			go test -count=1 -run 'Test' -bench 'List100' -benchtime "${GW_BENCH_TIME:-300x}" ./gateway/test/bench/ 2>&1 |
			grep -E '^(Benchmark|ok|FAIL|---)' || true
		echo '```'
		cat "$DIR/gateway.md" 2>/dev/null || true
	} | tee -a bench-results.md
fi

# Workspace mounts: GET and LIST of 500 configmaps straight to a target
# Meshplane, to the example proxy's mount URL, and through a mounted
# workspace of a second core; and how fast a Workspace follows its mount
# object. The test kit starts both cores (bin/meshplane) and
# bin/kubecluster-mounts. Skip with MOUNTS_BENCH=0.
if [[ ${MOUNTS_BENCH:-1} != 0 ]]; then
	{
		echo
		echo "## workspace mounts $(date -u +%Y-%m-%dT%H:%M:%SZ)"
		echo
		MOUNTS_BENCH_RUN=1 MOUNTS_BENCH_OUT="$DIR/mounts.md" MESHPLANE_BIN="$ROOT/bin/meshplane" \
			KUBECLUSTER_MOUNTS_BIN="$ROOT/bin/kubecluster-mounts" \
			go test -count=1 -run 'TestMountsBench' ./examples/mounts/test/bench/ 2>&1 | grep -E '^(ok|FAIL|---)' || true
		cat "$DIR/mounts.md" 2>/dev/null || true
	} | tee -a bench-results.md
fi

# The example providers (examples/test/bench): Database create→Ready and
# delete→gone on a throwaway PostgreSQL server, MongoDB create→downstream
# object and downstream status→consumer Ready, EX_BENCH_N (default 20)
# objects at once. The kit starts its own core; the providers run from
# bin/. Skip with EX_BENCH=0.
if [[ ${EX_BENCH:-1} != 0 ]]; then
	{
		echo
		echo "## example providers $(date -u +%Y-%m-%dT%H:%M:%SZ)"
		echo
		EX_BENCH_RUN=1 EX_BENCH_OUT="$DIR/examples.md" MESHPLANE_BIN="$ROOT/bin/meshplane" \
			PROVIDER_KUBECONFIG_BIN="$ROOT/bin/provider-kubeconfig" MONGODB_PROVIDER_BIN="$ROOT/bin/mongodb-provider" \
			POSTGRES_PROVIDER_BIN="$ROOT/bin/postgres-provider" \
			go test -count=1 -run TestExamplesBench ./examples/test/bench/ >"$DIR/examples.log" 2>&1 || tail -30 "$DIR/examples.log"
		cat "$DIR/examples.md" 2>/dev/null || true
	} | tee -a bench-results.md
fi

# The rebac-authz-webhook: SubjectAccessReview decisions cold and cached
# against the raw OpenFGA Check of the same question, and the cost it adds
# to a GET through the core. Starts bin/openfga and bin/meshplane; the
# webhook runs in the test process. Skip with REBAC_BENCH=0.
if [[ ${REBAC_BENCH:-1} != 0 ]]; then
	{
		echo
		echo "## rebac-authz-webhook $(date -u +%Y-%m-%dT%H:%M:%SZ)"
		echo
		REBAC_BENCH_RUN=1 REBAC_BENCH_OUT="$DIR/rebac.md" MESHPLANE_BIN="$ROOT/bin/meshplane" OPENFGA_BIN="$ROOT/bin/openfga" \
			go test -count=1 -run TestBench ./webhook/test/bench/ >"$DIR/rebac.log" 2>&1 || { tail -40 "$DIR/rebac.log"; false; }
		cat "$DIR/rebac.md"
	} | tee -a bench-results.md
fi

# Authorization (issue 23): on make run's platform (bin/meshplane-platform
# and the binaries beside it, webhook and core caches on), grant-to-allowed
# and revoke-to-refused of a RoleAssignment (AUTHZ_BENCH_ROUNDS, default
# 20, bob polling every 20 ms), then AUTHZ_BENCH_ORGS (default 100)
# organizations with bob a member of each and AUTHZ_BENCH_GETS (default
# 1000) of his GETs through the webhook, new objects and repeated ones,
# against the admin's (RBAC). About 5 minutes. Skip with AUTHZ_BENCH=0.
if [[ ${AUTHZ_BENCH:-1} != 0 ]]; then
	{
		echo
		echo "## authz: grants, revocations, Checks through the core $(date -u +%Y-%m-%dT%H:%M:%SZ)"
		echo
		AUTHZ_BENCH_RUN=1 AUTHZ_BENCH_OUT="$DIR/authz.md" \
			go test -count=1 -timeout 30m -run 'TestAuthzBench$' ./webhook/test/e2e/ >"$DIR/authz.log" 2>&1 || tail -40 "$DIR/authz.log"
		cat "$DIR/authz.md" 2>/dev/null || true
	} | tee -a bench-results.md
fi

# Hardening (issue 28): 200 clients of one tenant listing and re-watching
# a namespace that holds the largest ConfigMap the limits admit, over and
# over for HARDEN_BENCH_SECONDS (default 30), with the core's peak RSS and
# another tenant's creates before and during; then HARDEN_BENCH_DENIED
# (default 2000) requests RBAC does not allow, 10 clients, with the
# authorization webhook SIGSTOPped (p50/p99/max). The kit starts its own
# cores (bin/meshplane). Skip with HARDEN_BENCH=0.
if [[ ${HARDEN_BENCH:-1} != 0 ]]; then
	{
		echo
		echo "## hardening $(date -u +%Y-%m-%dT%H:%M:%SZ)"
		echo
		HARDEN_BENCH_RUN=1 HARDEN_BENCH_OUT="$DIR/hardening.md" MESHPLANE_BIN="$ROOT/bin/meshplane" \
			go test -count=1 -timeout 20m -run TestHardeningBench ./bench/test/hardening/ 2>&1 | grep -E '^(ok|FAIL|---)' || true
		cat "$DIR/hardening.md" 2>/dev/null || true
	} | tee -a bench-results.md
fi

# The account-operator: scripts/accounts-cost.sh starts the whole platform
# (bin/meshplane-platform, as `make run`) in a temporary root directory on a
# free 20-port range, then ACCOUNTS_ORGS (default 100) org Accounts and
# ACCOUNTS (default 1000) accounts spread over them, each batch timed until
# every Account is Ready, with the operator's and the core's RSS, and what
# each Account cost every process in CPU and requests. Extra operator flags:
# ACCOUNT_OPERATOR_ARGS. Skip with ACCOUNTS_BENCH=0.
if [[ ${ACCOUNTS_BENCH:-1} != 0 ]]; then
	for bin in bin/meshplane-platform bin/account-operator; do
		if [[ ! -x $bin ]]; then
			echo "bench.sh: $bin not found; run 'make build' first" >&2
			exit 1
		fi
	done
	PB=$(free_range)
	{
		echo
		echo "## account-operator $(date -u +%Y-%m-%dT%H:%M:%SZ)"
		echo
		ORGS=${ACCOUNTS_ORGS:-100} ACCOUNTS=${ACCOUNTS:-1000} PORT_BASE=$PB "$ROOT/scripts/accounts-cost.sh" "$ROOT/bin"
	} | tee -a bench-results.md
fi

# Platform scale (issue 27): scripts/scale-cost.sh starts the whole
# platform with every profiler on, on a free 20-port range, and samples
# each process's RSS and live Go heap at rest, after SCALE_ORGS (default
# 100) org Accounts, and after SCALE_ORGS more plus SCALE_ACCOUNTS
# (default 1000) accounts: memory per process, per org and per account,
# CPU seconds per org and per account, and the top of each heap profile
# (kept in SCALE_PROFILES when set). Skip with SCALE_BENCH=0.
if [[ ${SCALE_BENCH:-1} != 0 ]]; then
	PB=$(free_range)
	{
		echo
		echo "## platform scale $(date -u +%Y-%m-%dT%H:%M:%SZ)"
		echo
		ORGS=${SCALE_ORGS:-100} ACCOUNTS=${SCALE_ACCOUNTS:-1000} PORT_BASE=$PB PROFILES=${SCALE_PROFILES:-} \
			"$ROOT/scripts/scale-cost.sh" "$ROOT/bin"
	} | tee -a bench-results.md
fi

# Organizations and accounts Ready on each shard of `make run SHARDS=3`
# (issue 26): scripts/shard-ready.sh. Skip with SHARD_BENCH=0.
if [[ ${SHARD_BENCH:-1} != 0 ]]; then
	{
		echo
		echo "## Ready per shard $(date -u +%Y-%m-%dT%H:%M:%SZ)"
		echo
		SHARDS=${SHARD_BENCH_SHARDS:-3} "$ROOT/scripts/shard-ready.sh" "$ROOT/bin" || true
	} | tee -a bench-results.md
fi

# The front proxy: GET of one configmap straight to the shard and through
# bin/front-proxy (p50/p99, interleaved rounds), and how long a new
# workspace takes to be routable through it. The kit starts the core
# (bin/meshplane) and the proxy (bin/front-proxy). Skip with PROXY_BENCH=0.
if [[ ${PROXY_BENCH:-1} != 0 ]]; then
	{
		echo
		echo "## front proxy $(date -u +%Y-%m-%dT%H:%M:%SZ)"
		echo
		PROXY_BENCH_RUN=1 PROXY_BENCH_OUT="$DIR/proxy.md" MESHPLANE_BIN="$ROOT/bin/meshplane" \
			FRONT_PROXY_BIN="$ROOT/bin/front-proxy" \
			go test -count=1 -run 'TestFrontProxyBench' ./proxy/test/bench/ 2>&1 | grep -E '^(ok|FAIL|---)' || true
		cat "$DIR/proxy.md" 2>/dev/null || true
		# API sharing across shards: two shards and the proxy, bindings
		# on the export's shard and on the other one.
		echo
		PROXY_BENCH_RUN=1 PROXY_BENCH_SHARING_OUT="$DIR/sharing.md" MESHPLANE_BIN="$ROOT/bin/meshplane" \
			FRONT_PROXY_BIN="$ROOT/bin/front-proxy" APIGEN_BIN="$ROOT/bin/apigen" \
			go test -count=1 -run 'TestSharingBench' ./proxy/test/bench/ 2>&1 | grep -E '^(ok|FAIL|---)' || true
		cat "$DIR/sharing.md" 2>/dev/null || true
		# Replication cost per shard at 2, 4 and 8 shards, with the
		# replicas of each shard and with the cache server.
		echo
		PROXY_BENCH_RUN=1 PROXY_BENCH_REPLICATION_OUT="$DIR/replication.md" MESHPLANE_BIN="$ROOT/bin/meshplane" \
			go test -count=1 -timeout 30m -run 'TestReplicationBench' ./proxy/test/bench/ 2>&1 | grep -E '^(ok|FAIL|---)' || true
		cat "$DIR/replication.md" 2>/dev/null || true
	} | tee -a bench-results.md
fi

# OpenFGA and the security-operator's part of it: composing an
# organization's model with 200 bound resource types, writing it into
# OpenFGA (SQLite) and the unchanged check, a grant + check + revoke
# round trip, an account's tuple write over gRPC (OpenFGA's CPU per
# write, server-ms/op), and the type system OpenFGA builds and caches per
# organization (retained-MB/op; no server). Each benchmark but the last
# starts its own bin/openfga. Skip
# with FGA_BENCH=0.
if [[ ${FGA_BENCH:-1} != 0 ]]; then
	{
		echo
		echo "## openfga / security-operator $(date -u +%Y-%m-%dT%H:%M:%SZ)"
		echo
		echo '```'
		OPENFGA_BIN="$ROOT/bin/openfga" \
			go test -count=1 -run 'XXX' -bench . -benchtime "${FGA_BENCH_TIME:-20x}" ./operators/fgaclient/ 2>&1 |
			grep -E '^(Benchmark|ok|FAIL|---)' || true
		echo '```'
	} | tee -a bench-results.md
fi
