#!/usr/bin/env bash
# scale-cost.sh: where the platform's memory goes as organizations and
# accounts grow (issue 27). Starts the platform (bin/meshplane-platform, as
# `make run`, with the operators' and OpenFGA's profilers on) in a
# temporary root directory and, at rest and after each stage, samples every
# process the launcher started: its resident set (VmRSS) and, where the
# process serves pprof (core, account-operator, security-operator, OpenFGA),
# its live Go heap after a forced collection (HeapAlloc of
# /debug/pprof/heap?gc=1) and that heap profile. Stages (meshplane-bench's
# accounts phase, a new name prefix each):
#   1. ORGS org Accounts, no accounts: the figures at ORGS organizations
#      and the cost of one organization;
#   2. ORGS more org Accounts and ACCOUNTS accounts over them: the figures
#      at 2*ORGS organizations and ACCOUNTS accounts, and the cost of one
#      account (the growth minus ORGS organizations at stage 1's rate).
# Prints a Markdown table (MiB per process per stage, KiB per org and per
# account, and the CPU seconds each stage cost all processes together per
# object: load-independent figures, not rates) and, per profiled process,
# the top of its last heap profile (PROFILE_TOP lines, default 12).
# Usage: scripts/scale-cost.sh [BIN_DIR] (default bin); ORGS (100),
# ACCOUNTS (1000), PORT_BASE (33000; uses PORT_BASE..+19), PROFILES (a
# directory to keep the heap profiles in, <stage>-<process>.heap; default:
# thrown away with the run), SETTLE (seconds to wait before each sample,
# default 5), CORE_ARGS (extra flags of `meshplane start`, e.g.
# --feature-gates=ListFromCacheSnapshot=false).
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

BIN=${1:-bin}
ORGS=${ORGS:-100}
ACCOUNTS=${ACCOUNTS:-1000}
PB=${PORT_BASE:-33000}
SETTLE=${SETTLE:-5}
OUT=$(mktemp -d)
ROOT=$OUT/root
PROF=${PROFILES:-$OUT/profiles}
mkdir -p "$PROF"
FGA_PROFILER=127.0.0.1:$((PB + 17))

start() {
	start_platform "$BIN/meshplane-platform" "$ROOT" "$PB" "$OUT/platform.log" \
		--account-operator-args "--profiling" --security-operator-args "--profiling" \
		--openfga-args "--profiler-enabled --profiler-addr $FGA_PROFILER" ${CORE_ARGS:+--core-args "$CORE_ARGS"}
	LPID=$PLATFORM_PID
	wait_platform "$ROOT" "$OUT/platform.log" 20 scale-cost.sh || exit 1
	mapfile -t PIDS < <(pgrep -P "$LPID")
}
LPID=''
trap 'kill -TERM $LPID 2>/dev/null || true; wait $LPID 2>/dev/null || true; rm -rf "$OUT"' EXIT
start
KC=(kubectl --kubeconfig "$ROOT/admin.kubeconfig" --context shard-base)
name_of() { basename "$(readlink "/proc/$1/exe")"; }

# heap_get NAME QUERY: the process's heap profile (fails if it serves none).
heap_get() {
	local name=$1 query=$2
	case $name in
	meshplane) "${KC[@]}" get --raw "/debug/pprof/heap?$query" ;;
	account-operator) curl -sf "http://127.0.0.1:$((PB + 3))/debug/pprof/heap?$query" ;;
	security-operator) curl -sf "http://127.0.0.1:$((PB + 9))/debug/pprof/heap?$query" ;;
	openfga) curl -sf "http://$FGA_PROFILER/debug/pprof/heap?$query" ;;
	*) return 1 ;;
	esac
}

# sample STAGE: appends "STAGE NAME RSS_BYTES HEAP_BYTES CPU_TICKS" per
# process to $OUT/samples (HEAP_BYTES 0 where there is no profiler) and
# keeps each heap profile as $PROF/STAGE-NAME.heap.
sample() {
	local stage=$1 p name rss heap
	sleep "$SETTLE"
	for p in "${PIDS[@]}"; do
		[[ -d /proc/$p ]] || continue
		name=$(name_of "$p")
		heap=0
		if heap_get "$name" 'gc=1' >"$PROF/$stage-$name.heap" 2>/dev/null; then
			heap=$(heap_get "$name" 'debug=1' | sed -n 's/^# HeapAlloc = //p')
		else
			rm -f "$PROF/$stage-$name.heap"
		fi
		rss=$(awk '$1 == "VmRSS:" { print $2 * 1024 }' "/proc/$p/status")
		echo "$stage $name $rss ${heap:-0} $(cpu_ticks "$p")"
	done >>"$OUT/samples"
}

bench() {
	"$BIN/meshplane-bench" --kubeconfig "$ROOT/admin.kubeconfig" --creates 0 --gets 0 --lists 0 --clusters 0 \
		--workspaces 0 --workspace-tree 0 --bindings 0 --vw-lists 0 --vw-watch-events 0 --vw-large=false \
		--account-orgs "$1" --accounts "$2" >"$OUT/bench-$1-$2.md" 2>"$OUT/bench-$1-$2.log" || {
		echo "scale-cost.sh: meshplane-bench failed:" >&2
		tail -20 "$OUT/bench-$1-$2.log" >&2
		return 1
	}
	grep -E 'Ready' "$OUT/bench-$1-$2.md" >&2 || true
}

sample idle
bench "$ORGS" 0
sample orgs
bench "$ORGS" "$ACCOUNTS"
sample accounts
if [[ ${REST:-0} == 1 ]]; then
	kill -TERM "$LPID" && wait "$LPID" || true
	start
	SETTLE=${REST_SETTLE:-60} sample rest
fi

echo "| process | RSS idle / live heap | RSS / live heap at $ORGS orgs | RSS / live heap at $((2 * ORGS)) orgs + $ACCOUNTS accounts | per org: RSS / live heap | per account: RSS / live heap |$([[ ${REST:-0} == 1 ]] && echo ' restarted, at rest | per account at rest |')"
echo "| --- | --- | --- | --- | --- | --- |$([[ ${REST:-0} == 1 ]] && echo ' --- | --- |')"
awk -v orgs="$ORGS" -v accounts="$ACCOUNTS" -v hz="$(getconf CLK_TCK)" '
	{ rss[$1, $2] = $3; heap[$1, $2] = $4; cpu[$1, $2] = $5; names[$2] = 1 }
	function mib(b) { return sprintf("%.0f", b / 1048576) }
	function pair(r, h) { return h > 0 ? mib(r) " / " mib(h) " MiB" : mib(r) " MiB / -" }
	function kib(d, n) { return sprintf("%.1f", d / 1024 / n) }
	END {
		for (n in names) {
			org_r = (rss["orgs", n] - rss["idle", n]) / orgs
			org_h = (heap["orgs", n] - heap["idle", n]) / orgs
			acc_r = (rss["accounts", n] - rss["orgs", n] - orgs * org_r) / accounts
			acc_h = (heap["accounts", n] - heap["orgs", n] - orgs * org_h) / accounts
			printf "| %s | %s | %s | %s | %s | %s |", n, pair(rss["idle", n], heap["idle", n]),
				pair(rss["orgs", n], heap["orgs", n]), pair(rss["accounts", n], heap["accounts", n]),
				kib(org_r * orgs, orgs) " KiB / " (heap["idle", n] > 0 ? kib(org_h * orgs, orgs) " KiB" : "-"),
				kib(acc_r * accounts, accounts) " KiB / " (heap["idle", n] > 0 ? kib(acc_h * accounts, accounts) " KiB" : "-")
			if (("rest", n) in rss) {
				# at rest: the growth from idle minus 2*orgs at the stage-1 rate
				printf " %s | %s KiB / %s |", pair(rss["rest", n], heap["rest", n]),
					kib(rss["rest", n] - rss["idle", n] - 2 * orgs * org_r, accounts),
					(heap["idle", n] > 0 ? kib(heap["rest", n] - heap["idle", n] - 2 * orgs * org_h, accounts) " KiB" : "-")
				tr_r += rss["rest", n]
			}
			printf "\n"
			tr_i += rss["idle", n]; tr_o += rss["orgs", n]; tr_a += rss["accounts", n]
			c_o += cpu["orgs", n] - cpu["idle", n]; c_a += cpu["accounts", n] - cpu["orgs", n]
		}
		org = (tr_o - tr_i) / orgs
		acc = (tr_a - tr_o - orgs * org) / accounts
		printf "| **all** | %s MiB | %s MiB | %s MiB | %s KiB | %s KiB |", mib(tr_i), mib(tr_o), mib(tr_a), kib(org * orgs, orgs), kib(acc * accounts, accounts)
		if (tr_r > 0) printf " %s MiB | %s KiB |", mib(tr_r), kib(tr_r - tr_i - 2 * orgs * org, accounts)
		printf "\n"
		cpu_org = c_o / hz / orgs
		cpu_acc = (c_a / hz - orgs * cpu_org) / accounts
		printf "\nCPU, all processes (utime+stime; load-independent, unlike the rates): %.1f ms per org, %.1f ms per account\n", cpu_org * 1000, cpu_acc * 1000
	}' "$OUT/samples"
echo
grep -hE 'Ready \(.*(/s|first create to last Ready) \|' "$OUT"/bench-*.md | sed 's/^/rate (load-dependent): /' || true
LAST=accounts WHEN=''
[[ ${REST:-0} != 1 ]] || LAST=rest WHEN=', restarted, at rest'
for f in "$PROF"/$LAST-*.heap; do
	[[ -s $f ]] || continue
	echo
	echo "Top of $(basename "$f" .heap | sed "s/^$LAST-//") live heap at $((2 * ORGS)) orgs + $ACCOUNTS accounts$WHEN (inuse_space, flat):"
	echo '```'
	go tool pprof -sample_index=inuse_space -top -nodecount="${PROFILE_TOP:-12}" "$f" 2>/dev/null | sed -n '/^Showing\|^ *flat/,$p' | head -$((${PROFILE_TOP:-12} + 3))
	echo '```'
done
