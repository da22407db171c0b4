#!/usr/bin/env bash
# Install the Debian packages the tests run for real: chromium (the GraphiQL
# browser test, gateway/test/e2e) and postgresql (sdk/testing/postgres: the
# examples' PostgreSQL provider and OpenFGA on PostgreSQL; the tests run
# initdb in a temp dir of their own, never the package's default cluster);
# runc, containerd, containernetworking-plugins, iptables and conntrack
# (sdk/testing/kubecluster: the test cluster's container runtime, pod network
# and kube-proxy).
# Idempotent: installs only what is missing. Needs root (or sudo) and an apt
# source; without them it says so and exits 0, and the tests that need a
# package say which one is missing.
set -euo pipefail
shopt -s nullglob
missing=()
[[ -x /usr/bin/chromium ]] || missing+=(chromium)
postgres=(/usr/lib/postgresql/*/bin/postgres)
((${#postgres[@]} > 0)) || missing+=(postgresql)
[[ -x /usr/sbin/runc || -x /usr/bin/runc ]] || missing+=(runc)
[[ -x /usr/bin/containerd && -x /usr/bin/ctr ]] || missing+=(containerd)
[[ -x /usr/lib/cni/bridge ]] || missing+=(containernetworking-plugins)
command -v iptables-restore >/dev/null || missing+=(iptables)
command -v conntrack >/dev/null || missing+=(conntrack)
if ((${#missing[@]} == 0)); then
	exit 0
fi
SUDO=""
if [[ $(id -u) != 0 ]]; then
	if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
		SUDO="sudo -n"
	else
		echo "install-test-deps.sh: not root and no sudo; install ${missing[*]} with apt-get by hand" >&2
		exit 0
	fi
fi
export DEBIAN_FRONTEND=noninteractive
if ! $SUDO apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null 2>&1; then
	$SUDO apt-get update -qq >/dev/null 2>&1 || true
	$SUDO apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null 2>&1 || {
		echo "install-test-deps.sh: apt-get install ${missing[*]} failed" >&2
		exit 0
	}
fi
echo "install-test-deps.sh: installed ${missing[*]}" >&2
