#!/usr/bin/env bash
# Benchmark a freshly started Meshplane server with meshplane-bench.
#
# Usage: scripts/bench.sh [extra meshplane-bench flags...]
#   e.g. scripts/bench.sh --clusters 200 --creates 1000
#   a quick smoke run of every phase:
#   scripts/bench.sh --creates 200 --gets 200 --list-size 200 --clusters 50 \
#     --workspaces 50 --bindings 5 --vw-large=false --vw-watch-consumers 20
#   the workspace memory target: scripts/bench.sh --workspaces-10k
#
# Expects bin/meshplane and bin/meshplane-bench (built by `make build`); this
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
	--embedded-etcd-client-port "$E" --embedded-etcd-peer-port "$F")

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

# OpenFGA and the security-operator's part of it: composing an
# organization's model with 200 bound resource types, writing it into
# OpenFGA (SQLite) and the unchanged check, and a grant + check + revoke
# round trip. Each benchmark starts its own bin/openfga. Skip with FGA_BENCH=0.
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
