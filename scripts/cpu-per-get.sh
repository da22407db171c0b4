#!/usr/bin/env bash
# cpu-per-get.sh BIN PORT N: the core's own CPU time and allocations per GET
# of one configmap (docs/benchmarks.md, issue 13, fifth pass).
#
# Starts BIN (bin/meshplane) on 127.0.0.1:PORT (etcd on PORT+1/+2) in a temp
# root, creates configmap n/c1-000000 in logical cluster c and warms up with
# 500 GETs, then reads utime+stime of the server (/proc/<pid>/stat) and
# go_memstats_mallocs_total / alloc_bytes_total (/metrics) around N
# sequential GETs (meshplane-bench). Prints one line and the GET latencies;
# the server is stopped at the end.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
BIN=$1 P=$2 N=$3
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=$ROOT/bin/meshplane-bench
D=$(mktemp -d)
start_core "$BIN" "$D" "$P" $((P + 1)) $((P + 2)) "$D/log"
PID=$CORE_PID
trap 'kill $PID 2>/dev/null; wait $PID 2>/dev/null; rm -rf "$D"' EXIT
wait_core "$D/admin.kubeconfig" || true
sleep 3
common=(--kubeconfig "$D/admin.kubeconfig" --lists 0 --clusters 0 --workspaces 0 --workspace-tree 0
	--bindings 0 --vw-lists 0 --vw-large=false --vw-watch-events 0 --protobuf=false --keep
	--namespace n --cluster c --creates 1 --workers 1)
"$B" "${common[@]}" --gets 500 >/dev/null 2>&1
t0=$(cpu_ticks $PID); read -r m0 b0 < <(core_allocs "$D/admin.kubeconfig")
# The one create fails (the configmap exists): meshplane-bench exits 1.
out=$("$B" "${common[@]}" --gets "$N" 2>/dev/null || true)
t1=$(cpu_ticks $PID); read -r m1 b1 < <(core_allocs "$D/admin.kubeconfig")
hz=$(getconf CLK_TCK)
awk -v t0="$t0" -v t1="$t1" -v hz="$hz" -v n="$N" -v m0="$m0" -v m1="$m1" -v b0="$b0" -v b1="$b1" -v load="$(cut -d' ' -f1-3 /proc/loadavg)" \
	'BEGIN{printf "load %s | server CPU per GET %.3f ms | allocations per GET %d, %.1f KB\n", load, (t1-t0)*1000/hz/n, (m1-m0)/n, (b1-b0)/n/1000}'
grep -i "GET p" <<<"$out" || true
