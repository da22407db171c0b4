#!/usr/bin/env bash
# shard-ready.sh: how long an organization, and an account in it, take to
# become Ready on each shard of a sharded platform (issue 26). Starts
# bin/meshplane-platform --shards SHARDS (as `make run SHARDS=N`) in a
# temporary root directory, then for each shard in turn makes the others
# unschedulable and, as the demo user alice through the front proxy,
# creates ORGS organizations (Account type org) and ACCOUNTS accounts in
# the first of them, each timed from its create to its Ready condition
# (polled every 0.1 s: kubectl's own start, about 0.1 s, is in every
# figure). The first organization on a shard other than root is its first
# workspace: the operators start following that shard then. Prints a
# Markdown table: min / median / max per shard and kind.
# Usage: scripts/shard-ready.sh [BIN_DIR] (default bin); SHARDS (3, at
# most 4), ORGS (3), ACCOUNTS (3), PORT_BASE (a free range of 30 ports
# from 36000 when unset).
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

BIN=${1:-bin}
SHARDS=${SHARDS:-3}
ORGS=${ORGS:-3}
ACCOUNTS=${ACCOUNTS:-3}
OUT=$(mktemp -d)
ROOT=$OUT/root

# free_base prints a base B with B..B+29 free.
free_base() {
	local b i j busy
	for ((i = 0; i < 200; i++)); do
		b=$((36000 + (RANDOM % 800) * 30))
		busy=0
		for ((j = 0; j < 30; j++)); do
			if (exec 3<>"/dev/tcp/127.0.0.1/$((b + j))") 2>/dev/null; then
				busy=1
				break
			fi
		done
		((busy)) || { echo "$b"; return 0; }
	done
	echo "shard-ready.sh: no free port range found" >&2
	return 1
}
PB=${PORT_BASE:-$(free_base)}

LPID=''
trap 'kill -TERM $LPID 2>/dev/null || true; wait $LPID 2>/dev/null || true; rm -rf "$OUT"' EXIT
start_platform "$BIN/meshplane-platform" "$ROOT" "$PB" "$OUT/platform.log" --demo-users=true --shards "$SHARDS"
LPID=$PLATFORM_PID
wait_platform "$ROOT" "$OUT/platform.log" 30 shard-ready.sh || exit 1
# shellcheck disable=SC1091
. "$ROOT/platform.env"
KC=(kubectl --kubeconfig "$KUBECONFIG")
IN_ROOT=("${KC[@]}" --context shard-base --server "$FRONT_PROXY_URL/clusters/root")
IFS=, read -r -a NAMES <<<"$SHARD_NAMES"

# ready NAME TYPE [WORKSPACE]: creates an Account as alice (in root:orgs,
# or in WORKSPACE) and prints the seconds from its create to Ready, and
# its workspace's shard.
ready() {
	local name=$1 type=$2 ws=${3:-} args t0 out i
	args=("${KC[@]}" --context alice)
	[[ -n $ws ]] && args+=(--server "$FRONT_PROXY_URL/clusters/$ws")
	for ((i = 0; i < 150; i++)); do
		printf 'apiVersion: core.platform-mesh.io/v1alpha1\nkind: Account\nmetadata: {name: %s}\nspec: {type: %s, displayName: %s}\n' \
			"$name" "$type" "$name" | "${args[@]}" create -f - >/dev/null 2>&1 && break
		sleep 0.2 # alice's rights in a new organization arrive shortly after it is Ready
	done
	t0=$(date +%s.%N)
	for ((i = 0; i < 1200; i++)); do
		out=$("${args[@]}" get account "$name" -o 'jsonpath={range .status.conditions[*]}{.type}={.status};{end}' 2>/dev/null || true)
		[[ $out == *"Ready=True"* ]] && break
		sleep 0.1
	done
	[[ $out == *"Ready=True"* ]] || { echo "shard-ready.sh: account $name not Ready after 2 minutes" >&2; return 1; }
	echo "$(echo "$(date +%s.%N) - $t0" | bc) $("${args[@]}" get workspace "$name" -o 'jsonpath={.metadata.annotations.core\.kcp\.io/shard}')"
}

# stats: min / median / max of the numbers on stdin, in seconds.
stats() { sort -n | awk '{v[NR]=$1} END {printf "%.2f / %.2f / %.2f s", v[1], v[int((NR+1)/2)], v[NR]}'; }

rows=()
for target in "${NAMES[@]}"; do
	for s in "${NAMES[@]}"; do
		if [[ $s == "$target" ]]; then
			"${IN_ROOT[@]}" annotate shard "$s" experimental.core.kcp.io/unschedulable- >/dev/null
		else
			"${IN_ROOT[@]}" annotate --overwrite shard "$s" experimental.core.kcp.io/unschedulable=true >/dev/null
		fi
	done
	orgs=() accounts=() first=''
	secs=''
	for ((i = 1; i <= ORGS; i++)); do
		read -r secs shard < <(ready "o-$target-$i" org) || true
		[[ -n ${secs:-} ]] || exit 1
		[[ $shard == "$target" ]] || { echo "shard-ready.sh: organization o-$target-$i landed on $shard, not $target" >&2; exit 1; }
		[[ -z $first ]] && first=$(printf "%.2f" "$secs")
		orgs+=("$secs")
	done
	for ((i = 1; i <= ACCOUNTS; i++)); do
		read -r secs shard < <(ready "a-$i" account "root:orgs:o-$target-1") || true
		[[ -n ${secs:-} ]] || exit 1
		accounts+=("$secs")
	done
	rows+=("| $target | $first s | $(printf '%s\n' "${orgs[@]}" | stats) | $(printf '%s\n' "${accounts[@]}" | stats) |")
done

echo "| shard | first organization Ready | organizations Ready (min / median / max of $ORGS) | accounts Ready ($ACCOUNTS in one organization) |"
echo "| --- | --- | --- | --- |"
printf '%s\n' "${rows[@]}"
