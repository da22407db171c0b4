#!/usr/bin/env bash
# fga-checks.sh: what a Check costs OpenFGA when the Checks go to many
# stores, as the rebac-authz-webhook's do (one store per organization).
# For every store of the OpenFGA at URL (at most STORES, default all),
# reads its newest model and one of its tuples, then asks CHECKS Checks
# (default 1000) of those tuples round-robin over the stores, with the
# model id as the webhook passes it: the worst order for a bounded type
# system cache, every store is revisited only after all the others.
# Prints OpenFGA's CPU per Check (utime+stime of PID from /proc/<pid>/stat)
# and the mean and 95th percentile wall time per Check (curl's, on
# loopback). HOT=h with COLD_EVERY=k: a skewed load instead, every k-th
# Check to the next store round-robin over all of them, the others
# round-robin over the first h stores only.
# OPENFGA_PRESHARED_KEY_FILE (platform.env names it): the file of the
# OpenFGA's preshared API key, sent with every call.
# Usage: scripts/fga-checks.sh URL PID
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

URL=$1 PID=$2
CHECKS=${CHECKS:-1000}
STORES=${STORES:-0}
HOT=${HOT:-0} COLD_EVERY=${COLD_EVERY:-0}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
# curl's config file keeps the key out of the process list.
: >"$TMP/curlrc"
if [[ -n ${OPENFGA_PRESHARED_KEY_FILE:-} ]]; then
	printf 'header = "Authorization: Bearer %s"\n' "$(head -1 "$OPENFGA_PRESHARED_KEY_FILE")" >"$TMP/curlrc"
fi
curl() { command curl -K "$TMP/curlrc" "$@"; }

# Stores, all pages.
token=''
while :; do
	curl -sf "$URL/stores?page_size=100&continuation_token=$token" >"$TMP/page"
	jq -r '.stores[].id' "$TMP/page" >>"$TMP/stores"
	token=$(jq -r '.continuation_token // ""' "$TMP/page")
	[[ -n $token ]] || break
done
[[ $STORES == 0 ]] || { head -n "$STORES" "$TMP/stores" >"$TMP/s" && mv "$TMP/s" "$TMP/stores"; }

# One Check body per store that has a model and a tuple.
n=0
while read -r store; do
	model=$(curl -sf "$URL/stores/$store/authorization-models?page_size=1" | jq -r '.authorization_models[0].id // ""')
	key=$(curl -sf -X POST "$URL/stores/$store/read" -d '{"page_size":1}' | jq -c '.tuples[0].key // empty')
	[[ -n $model && -n $key ]] || continue
	jq -nc --argjson k "$key" --arg m "$model" \
		'{tuple_key: {user: $k.user, relation: $k.relation, object: $k.object}, authorization_model_id: $m}' >"$TMP/body.$n"
	echo "$store" >"$TMP/store.$n"
	n=$((n + 1))
done <"$TMP/stores"
((n > 0)) || { echo "fga-checks.sh: no store with a model and a tuple" >&2; exit 1; }

t0=$(cpu_ticks "$PID")
cold=0
for ((i = 0; i < CHECKS; i++)); do
	if ((HOT == 0 || COLD_EVERY == 0)); then
		j=$((i % n))
	elif ((i % COLD_EVERY == 0)); then
		j=$((cold % n)) cold=$((cold + 1))
	else
		j=$((i % (HOT < n ? HOT : n)))
	fi
	curl -sf -o /dev/null -w '%{time_total}\n' -X POST "$URL/stores/$(<"$TMP/store.$j")/check" -d @"$TMP/body.$j"
done >"$TMP/times"
t1=$(cpu_ticks "$PID")
HZ=$(getconf CLK_TCK)
sort -n "$TMP/times" | awk -v t=$((t1 - t0)) -v hz="$HZ" -v c="$CHECKS" -v n="$n" -v h="$HOT" -v k="$COLD_EVERY" '
	{ v[NR] = $1; s += $1 }
	END { printf "Checks: %d over %d stores (hot %d, every %d-th cold): OpenFGA CPU %.2f ms per Check; wall mean %.2f ms, p95 %.2f ms\n",
		c, n, h, k, t * 1000 / hz / c, s * 1000 / NR, v[int(NR * 0.95)] * 1000 }' | sed 's/ (hot 0, every 0-th cold)/ round-robin/'
