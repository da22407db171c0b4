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
# PLATFORM_ARGS (more arguments for meshplane-platform, e.g.
# --security-operator-args=--profiling).
set -euo pipefail

BIN=${1:-bin}
ORGS=${ORGS:-100}
ACCOUNTS=${ACCOUNTS:-1000}
PB=${PORT_BASE:-33000}
OUT=$(mktemp -d)
ROOT=$OUT/root

"$BIN/meshplane-platform" --root-directory "$ROOT" --port-base "$PB" --demo-users=false ${PLATFORM_ARGS:-} >"$OUT/platform.log" 2>&1 &
LPID=$!
trap 'kill -TERM $LPID 2>/dev/null || true; wait $LPID 2>/dev/null || true; rm -rf "$OUT"' EXIT
for ((i = 0; i < 300; i++)); do
	[[ -f $ROOT/platform.env ]] && break
	kill -0 $LPID 2>/dev/null || break
	sleep 1
done
if [[ ! -f $ROOT/platform.env ]]; then
	echo "accounts-cost.sh: the platform did not become ready; its log:" >&2
	tail -20 "$OUT/platform.log" >&2
	exit 1
fi
CPID='' OPID='' SPID='' FPID=''
for p in $(pgrep -P $LPID); do
	case $(basename "$(readlink /proc/$p/exe)") in
	meshplane) CPID=$p ;;
	account-operator) OPID=$p ;;
	security-operator) SPID=$p ;;
	openfga) FPID=$p ;;
	esac
done
KC=(kubectl --kubeconfig "$ROOT/admin.kubeconfig" --context shard-base)
ticks() { if [[ -n $1 ]]; then awk '{print $14 + $15}' "/proc/$1/stat"; else echo 0; fi; }
snapshot() {
	"${KC[@]}" get --raw /metrics >"$OUT/core-$1"
	curl -s "http://127.0.0.1:$((PB + 3))/metrics" >"$OUT/aop-$1"
	curl -s "http://127.0.0.1:$((PB + 9))/metrics" >"$OUT/sop-$1"
	curl -s "http://127.0.0.1:$((PB + 8))/metrics" >"$OUT/fga-$1"
}

snapshot before
C0=$(ticks $CPID) O0=$(ticks $OPID) S0=$(ticks $SPID) F0=$(ticks $FPID)
PROF=''
if [[ -n ${PROFILE_DELAY:-} ]]; then
	(sleep "$PROFILE_DELAY" && "${KC[@]}" get --raw '/debug/pprof/profile?seconds=30' >core.pprof) &
	PROF=$!
fi
"$BIN/meshplane-bench" --kubeconfig "$ROOT/admin.kubeconfig" --creates 0 --gets 0 --lists 0 --clusters 0 \
	--workspaces 0 --workspace-tree 0 --bindings 0 --vw-lists 0 --vw-watch-events 0 --vw-large=false \
	--account-orgs "$ORGS" --accounts "$ACCOUNTS" --account-operator-pid "$OPID" --platform-core-pid "$CPID"
C1=$(ticks $CPID) O1=$(ticks $OPID) S1=$(ticks $SPID) F1=$(ticks $FPID)
snapshot after
[[ -z $PROF ]] || wait $PROF

N=$((ORGS + ACCOUNTS))
HZ=$(getconf CLK_TCK)
echo
ms() { awk -v t="$1" -v hz="$HZ" -v n="$N" 'BEGIN { printf "%.1f", t * 1000 / hz / n }'; }
echo "Per Account ($N): CPU ms core $(ms $((C1 - C0))), account-operator $(ms $((O1 - O0))), security-operator $(ms $((S1 - S0))), openfga $(ms $((F1 - F0)))"

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
rm -rf "$OUT"
