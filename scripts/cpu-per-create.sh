#!/usr/bin/env bash
# cpu-per-create.sh BIN PORT N [server flags...]: the core's own CPU time and
# allocations per configmap create (docs/benchmarks.md, issue 13, third pass).
#
# Starts BIN (bin/meshplane) on 127.0.0.1:PORT (etcd on PORT+1/+2) in a temp
# root, warms up with 300+300 creates, then reads utime+stime of the server
# (/proc/<pid>/stat) and go_memstats_mallocs_total / alloc_bytes_total
# (/metrics) around two meshplane-bench runs: N creates with 1 client, then
# N with 1 client and N with 8 clients (the 8-client figure is the second
# run minus the first). Prints one line; the server is stopped at the end.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
BIN=$1 P=$2 N=$3
shift 3
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=$ROOT/bin/meshplane-bench
D=$(mktemp -d)
start_core "$BIN" "$D" "$P" $((P + 1)) $((P + 2)) "$D/log" "$@"
PID=$CORE_PID
trap 'kill $PID 2>/dev/null; wait $PID 2>/dev/null; rm -rf "$D"' EXIT
wait_core "$D/admin.kubeconfig" || true
sleep 3
rss_idle=$(awk '/VmRSS/{print $2}' /proc/$PID/status)
common=(--kubeconfig "$D/admin.kubeconfig" --gets 0 --lists 0 --clusters 0 --workspaces 0 --workspace-tree 0
	--bindings 0 --vw-lists 0 --vw-large=false --vw-watch-events 0 --protobuf=false --keep)
"$B" "${common[@]}" --creates 300 --workers 8 >/dev/null 2>&1
t0=$(cpu_ticks $PID); read -r m0 b0 < <(core_allocs "$D/admin.kubeconfig")
out1=$("$B" "${common[@]}" --creates "$N" --workers 1 2>/dev/null)
t1=$(cpu_ticks $PID); read -r m1 b1 < <(core_allocs "$D/admin.kubeconfig")
out8=$("$B" "${common[@]}" --creates "$N" --workers 8 2>/dev/null)
t2=$(cpu_ticks $PID); read -r m2 _ < <(core_allocs "$D/admin.kubeconfig")
rss_load=$(awk '/VmRSS/{print $2}' /proc/$PID/status)
hz=$(getconf CLK_TCK)
c1=$(grep -i "creates/s" <<<"$out1" | head -1 | awk -F'|' '{print $3}')
c8=$(grep -i "creates/s" <<<"$out8" | tail -1 | awk -F'|' '{print $3}')
awk -v t0="$t0" -v t1="$t1" -v t2="$t2" -v hz="$hz" -v n="$N" -v m0="$m0" -v m1="$m1" -v m2="$m2" \
	-v b0="$b0" -v b1="$b1" -v c1="$c1" -v c8="$c8" -v ri="$rss_idle" -v rl="$rss_load" -v load="$(cut -d' ' -f1-3 /proc/loadavg)" \
	'BEGIN{printf "load %s | server CPU per create: 1 client %.3f ms, 8 clients %.3f ms | allocations per create (1 client) %d, %.1f KB; 8 clients %d | creates/s 1 client%s, 8 clients%s | VmRSS idle %.1f MiB, after the runs %.1f MiB\n",
	load, (t1-t0)*1000/hz/n, ((t2-t1)-(t1-t0))*1000/hz/n, (m1-m0)/n, (b1-b0)/n/1000, ((m2-m1)-(m1-m0))/n, c1, c8, ri/1024, rl/1024}'
