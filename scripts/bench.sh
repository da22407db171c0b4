#!/usr/bin/env bash
# Benchmark a freshly started Meshplane server with meshplane-bench.
#
# Usage: scripts/bench.sh [extra meshplane-bench flags...]
#   e.g. scripts/bench.sh --clusters 200 --creates 1000
#   a quick smoke run of every phase:
#   scripts/bench.sh --creates 200 --gets 200 --list-size 200 --clusters 50 \
#     --workspaces 50 --bindings 5 --vw-large=false --vw-watch-consumers 20
#   the workspace memory target: scripts/bench.sh --workspaces-10k
#   extra server flags: MESHPLANE_ARGS=--embedded-etcd-in-process-client=false scripts/bench.sh
#
# Expects bin/meshplane and bin/meshplane-bench (and, for the mounts part,
# bin/kubecluster-mounts), built by `make build`; this
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
# REST, schema generation with 50 bound APIs, and GW_BENCH_WORKSPACES
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
