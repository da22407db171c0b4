# lib.sh: starting a core or the whole platform and waiting until it
# serves, as the benchmark scripts (bench.sh, accounts-cost.sh,
# cpu-per-create.sh) do. Source it; it defines functions only.

# start_core BIN ROOT PORT ETCD_CLIENT_PORT ETCD_PEER_PORT LOG [flags...]
# starts `BIN start` on 127.0.0.1:PORT with its embedded etcd on the two
# other ports and its data in ROOT, appending its output to LOG; the
# server's pid is CORE_PID.
start_core() {
	local bin=$1 root=$2 port=$3 etcd_client=$4 etcd_peer=$5 log=$6
	shift 6
	"$bin" start --root-directory "$root" --bind-address 127.0.0.1 --secure-port "$port" \
		--embedded-etcd-client-port "$etcd_client" --embedded-etcd-peer-port "$etcd_peer" "$@" >>"$log" 2>&1 &
	CORE_PID=$!
}

# wait_core KUBECONFIG: waits up to 2 minutes for the core of KUBECONFIG
# (context base) to answer /readyz; fails if it does not.
wait_core() {
	local i
	for ((i = 0; i < 600; i++)); do
		kubectl --kubeconfig "$1" --context base get --raw /readyz >/dev/null 2>&1 && return 0
		sleep 0.2
	done
	return 1
}

# start_platform BIN ROOT PORT_BASE LOG [flags...] starts the launcher
# (BIN, bin/meshplane-platform) in ROOT on the ports from PORT_BASE, without
# demo users, writing its output to LOG; the launcher's pid is
# PLATFORM_PID.
start_platform() {
	local bin=$1 root=$2 base=$3 log=$4
	shift 4
	"$bin" --root-directory "$root" --port-base "$base" --demo-users=false "$@" >"$log" 2>&1 &
	PLATFORM_PID=$!
}

# wait_platform ROOT LOG LINES WHO: waits up to 5 minutes for the platform
# in ROOT to write platform.env (it is ready then); if it stops or does
# not, prints "WHO: the platform did not become ready" and the last LINES
# lines of LOG, and fails.
wait_platform() {
	local root=$1 log=$2 lines=$3 who=$4 i
	for ((i = 0; i < 300; i++)); do
		[[ -f $root/platform.env ]] && break
		kill -0 "$PLATFORM_PID" 2>/dev/null || break
		sleep 1
	done
	if [[ ! -f $root/platform.env ]]; then
		echo "$who: the platform did not become ready; its log:" >&2
		tail -"$lines" "$log" >&2
		return 1
	fi
}

# platform_pids sets CORE_PID, AOP_PID, SOP_PID and OPENFGA_PID to the
# pids of the launcher's core, account-operator, security-operator and
# OpenFGA (its own children only, found by executable name; '' for one
# not running).
platform_pids() {
	local p
	CORE_PID='' AOP_PID='' SOP_PID='' OPENFGA_PID=''
	for p in $(pgrep -P "$PLATFORM_PID"); do
		case $(basename "$(readlink "/proc/$p/exe")") in
		meshplane) CORE_PID=$p ;;
		account-operator) AOP_PID=$p ;;
		security-operator) SOP_PID=$p ;;
		openfga) OPENFGA_PID=$p ;;
		esac
	done
}

# cpu_ticks PID: the process's CPU time so far, utime+stime in clock ticks
# (/proc/PID/stat; 0 when PID is empty).
cpu_ticks() {
	if [[ -n ${1:-} ]]; then awk '{print $14 + $15}' "/proc/$1/stat"; else echo 0; fi
}

# core_allocs KUBECONFIG: the core's allocations so far, "mallocs bytes"
# (go_memstats_mallocs_total and go_memstats_alloc_bytes_total of /metrics,
# context base).
core_allocs() {
	kubectl --kubeconfig "$1" --context base get --raw /metrics |
		awk '/^go_memstats_mallocs_total /{m=$2} /^go_memstats_alloc_bytes_total /{b=$2} END{printf "%.0f %.0f\n", m, b}'
}
