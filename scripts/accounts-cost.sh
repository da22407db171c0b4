#!/usr/bin/env bash
# accounts-cost.sh: what each Account costs the platform, in CPU and in
# requests. Starts the platform (bin/meshplane-platform, as `make run`) in a
# temporary root directory, runs the accounts benchmark (ORGS org Accounts,
# then ACCOUNTS accounts over them), and prints per Account:
#   - CPU (utime+stime from /proc/<pid>/stat, before the first create to
#     the last Ready) of the core, the account-operator and the
#     security-operator;
#   - the core's storage requests (etcd_requests_total by operation and
#     resource: every read and write, the in-process controllers' too),
#     its API requests (apiserver_request_total by verb and resource),
#     the operators' requests (rest_client_requests_total by method
#     and code) and OpenFGA's calls (grpc_server_handled_total by method
#     and code; its HTTP API is a gateway into them).
# Usage: scripts/accounts-cost.sh [BIN_DIR] (default bin); ORGS (100),
# ACCOUNTS (1000), PORT_BASE (33000), PROFILE_DELAY (seconds after the
# first create to take a 30 s CPU profile of the core; none by default),
# ACCOUNT_OPERATOR_ARGS (extra arguments for the account-operator, e.g.
# "--profiling --soft-memory-limit 80Mi"), HEAP_PROFILE (a file for the
# account-operator's heap profile right after the last Ready; needs
# --profiling),
# PLATFORM_ARGS (more arguments for meshplane-platform, e.g.
# --security-operator-args=--profiling), OPENFGA_ARGS (extra arguments for
# the platform's `openfga run`, e.g. "--profiler-enabled --profiler-addr
# 127.0.0.1:<port>"), FGA_CHECKS (after the run, that many Checks over
# OpenFGA's stores, round-robin or as HOT and COLD_EVERY say:
# scripts/fga-checks.sh),
# FGA_HEAP_PROFILE (a file for OpenFGA's heap profile after the run; needs
# its profiler in OPENFGA_ARGS and FGA_PROFILER=<its address>),
# IDLE_SECONDS (after the run, 60 s to settle (IDLE_SETTLE), then each of
# the launcher's processes' CPU over that many idle seconds, in ms per
# second, and the requests the core, the operators and OpenFGA served or
# sent in that window: what the platform costs left alone; IDLE_PROFILE: a
# file for the core's CPU profile over that window).
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

BIN=${1:-bin}
ORGS=${ORGS:-100}
ACCOUNTS=${ACCOUNTS:-1000}
PB=${PORT_BASE:-33000}
OUT=$(mktemp -d)
ROOT=$OUT/root

start_platform "$BIN/meshplane-platform" "$ROOT" "$PB" "$OUT/platform.log" \
	--account-operator-args "${ACCOUNT_OPERATOR_ARGS:-}" --openfga-args "${OPENFGA_ARGS:-}" ${PLATFORM_ARGS:-}
LPID=$PLATFORM_PID
trap 'kill -TERM $LPID 2>/dev/null || true; wait $LPID 2>/dev/null || true; rm -rf "$OUT"' EXIT
wait_platform "$ROOT" "$OUT/platform.log" 20 accounts-cost.sh || exit 1
platform_pids
CPID=$CORE_PID OPID=$AOP_PID SPID=$SOP_PID FPID=$OPENFGA_PID
KC=(kubectl --kubeconfig "$ROOT/admin.kubeconfig" --context shard-base)
snapshot() {
	"${KC[@]}" get --raw /metrics >"$OUT/core-$1"
	curl -s "http://127.0.0.1:$((PB + 3))/metrics" >"$OUT/aop-$1"
	curl -s "http://127.0.0.1:$((PB + 9))/metrics" >"$OUT/sop-$1"
	curl -s "http://127.0.0.1:$((PB + 8))/metrics" >"$OUT/fga-$1"
}

snapshot before
C0=$(cpu_ticks $CPID) O0=$(cpu_ticks $OPID) S0=$(cpu_ticks $SPID) F0=$(cpu_ticks $FPID)
PROF=''
if [[ -n ${PROFILE_DELAY:-} ]]; then
	(sleep "$PROFILE_DELAY" && "${KC[@]}" get --raw '/debug/pprof/profile?seconds=30' >core.pprof) &
	PROF=$!
fi
"$BIN/meshplane-bench" --kubeconfig "$ROOT/admin.kubeconfig" --creates 0 --gets 0 --lists 0 --clusters 0 \
	--workspaces 0 --workspace-tree 0 --bindings 0 --vw-lists 0 --vw-watch-events 0 --vw-large=false \
	--account-orgs "$ORGS" --accounts "$ACCOUNTS" --account-operator-pid "$OPID" --platform-core-pid "$CPID"
C1=$(cpu_ticks $CPID) O1=$(cpu_ticks $OPID) S1=$(cpu_ticks $SPID) F1=$(cpu_ticks $FPID)
[[ -z ${HEAP_PROFILE:-} ]] || curl -s "http://127.0.0.1:$((PB + 3))/debug/pprof/heap" >"$HEAP_PROFILE"
snapshot after
[[ -z $PROF ]] || wait $PROF
# Memory after the run: resident sets, and OpenFGA's Go heap (in use, and
# live after a forced collection when its profiler is on).
rss() { if [[ -n ${1:-} ]]; then awk '$1 == "VmRSS:" { printf "%.0f", $2 / 1024 }' "/proc/$1/status"; else echo 0; fi; }
echo "RSS after (MiB): core $(rss $CPID), account-operator $(rss $OPID), security-operator $(rss $SPID), openfga $(rss $FPID)"
awk '$1 == "go_memstats_heap_inuse_bytes" { printf "OpenFGA heap in use after: %.0f MiB\n", $2 / 1048576 }' "$OUT/fga-after"
if [[ -n ${FGA_HEAP_PROFILE:-} ]]; then
	curl -sf "http://${FGA_PROFILER:?FGA_PROFILER: the address of --profiler-addr}/debug/pprof/heap?gc=1" >"$FGA_HEAP_PROFILE"
	curl -sf "http://$FGA_PROFILER/debug/pprof/heap?debug=1" | awk '/^# HeapAlloc/ { printf "OpenFGA live heap after a collection: %.0f MiB\n", $4 / 1048576 }'
fi
[[ -z ${FGA_CHECKS:-} ]] || CHECKS=$FGA_CHECKS OPENFGA_PRESHARED_KEY_FILE=$ROOT/openfga/preshared.key "$(dirname "${BASH_SOURCE[0]}")/fga-checks.sh" "http://127.0.0.1:$((PB + 6))" "$FPID"

N=$((ORGS + ACCOUNTS))
HZ=$(getconf CLK_TCK)
echo
ms() { awk -v t="$1" -v hz="$HZ" -v n="$N" 'BEGIN { printf "%.1f", t * 1000 / hz / n }'; }
echo "Per Account ($N): CPU ms core $(ms $((C1 - C0))), account-operator $(ms $((O1 - O0))), security-operator $(ms $((S1 - S0))), openfga $(ms $((F1 - F0)))"
gcs() { awk '$1 == "go_gc_duration_seconds_count" { print $2 }' "$OUT/aop-$1"; }
echo "account-operator GC cycles over the run: $(($(gcs after) - $(gcs before)))"

# per_account METRIC FILE-PREFIX LABEL...: the metric's increase over the
# run per Account, by the labels named, largest first.
per_account() {
	local metric=$1 prefix=$2
	shift 2
	awk -v metric="$metric" -v n="$N" -v keys="$*" '
		function key(line,   k, i, c, parts, m) {
			k = ""
			c = split(keys, parts, " ")
			for (i = 1; i <= c; i++) {
				m = ""
				if (match(line, parts[i] "=\"[^\"]*\"")) m = substr(line, RSTART + length(parts[i]) + 2, RLENGTH - length(parts[i]) - 3)
				k = k " " m
			}
			return k
		}
		index($0, metric "{") == 1 { v = $NF; k = key($0); if (FILENAME ~ /before$/) b[k] += v; else a[k] += v }
		END { for (k in a) if (a[k] - b[k] > 0) { t += a[k] - b[k]; printf "%8.2f %s\n", (a[k] - b[k]) / n, k }
			printf "%8.2f total\n", t / n }' "$OUT/$prefix-before" "$OUT/$prefix-after" | sort -rn | head -25
}
echo
echo "Core storage requests per Account (operation, resource):"
per_account etcd_requests_total core operation resource
echo
echo "Core API requests per Account (verb, resource, subresource, code):"
per_account apiserver_request_total core verb resource subresource code
echo
echo "account-operator requests per Account (method, code):"
per_account rest_client_requests_total aop method code
echo
echo "security-operator requests per Account (method, code):"
per_account rest_client_requests_total sop method code
echo
echo "OpenFGA calls per Account (method, code):"
per_account grpc_server_handled_total fga grpc_method grpc_code

[[ -n ${IDLE_SECONDS:-} ]] || exit 0
# Idle: every process the launcher started (and the launcher), by name.
sleep "${IDLE_SETTLE:-60}"
mapfile -t PIDS < <(echo "$LPID"; pgrep -P "$LPID")
snapshot idle-before
declare -A I0
for p in "${PIDS[@]}"; do I0[$p]=$(cpu_ticks "$p"); done
T0=$(date +%s.%N)
if [[ -n ${IDLE_PROFILE:-} ]]; then
	"${KC[@]}" get --raw "/debug/pprof/profile?seconds=$IDLE_SECONDS" >"$IDLE_PROFILE"
else
	sleep "$IDLE_SECONDS"
fi
T1=$(date +%s.%N)
snapshot idle-after
echo
echo "Idle over $IDLE_SECONDS s ($(uptime | sed 's/.*load/load/')): CPU ms per second"
for p in "${PIDS[@]}"; do
	echo "$(($(cpu_ticks "$p") - ${I0[$p]})) $(basename "$(readlink "/proc/$p/exe")")"
done | awk -v hz="$HZ" -v s="$(awk -v a="$T0" -v b="$T1" 'BEGIN { print b - a }')" '
	{ printf "%8.2f %s\n", $1 * 1000 / hz / s, $2; t += $1 }
	END { printf "%8.2f total\n", t * 1000 / hz / s }' | sort -rn
# per_minute METRIC FILE-PREFIX LABEL...: the metric's increase over the
# idle window per minute, by the labels named, largest first.
per_minute() {
	local metric=$1 prefix=$2
	shift 2
	N=$(awk -v s="$IDLE_SECONDS" 'BEGIN { print s / 60 }') per_account "$metric" "$prefix-idle" "$@"
}
echo
echo "Idle: core API requests per minute (verb, group, resource, subresource, scope, code):"
per_minute apiserver_request_total core verb group resource subresource scope code
echo
echo "Idle: core storage requests per minute (operation, resource):"
per_minute etcd_requests_total core operation resource
echo
echo "Idle: account-operator requests per minute (method, code):"
per_minute rest_client_requests_total aop method code
echo
echo "Idle: security-operator requests per minute (method, host, code):"
per_minute rest_client_requests_total sop method host code
echo
echo "Idle: OpenFGA calls per minute (method, code):"
per_minute grpc_server_handled_total fga grpc_method grpc_code
