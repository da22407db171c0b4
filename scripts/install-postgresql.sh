#!/usr/bin/env bash
# Install Debian's postgresql for the tests that start a throwaway PostgreSQL
# server (sdk/testing/postgres: examples/postgres, OpenFGA on PostgreSQL).
# Idempotent: does nothing when /usr/lib/postgresql/<version>/bin/postgres
# exists. Needs root (or sudo) and an apt source; without them it says so and
# exits 0, and those tests fail with a message naming this script.
set -euo pipefail
shopt -s nullglob
installed() {
	local bins=(/usr/lib/postgresql/*/bin/postgres)
	((${#bins[@]} > 0))
}
if installed; then
	exit 0
fi
SUDO=""
if [[ $(id -u) != 0 ]]; then
	if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
		SUDO="sudo -n"
	else
		echo "install-postgresql.sh: not root and no sudo; install Debian's postgresql package by hand" >&2
		exit 0
	fi
fi
export DEBIAN_FRONTEND=noninteractive
# The tests never use the package's default cluster: they run initdb in a
# temp dir of their own.
if ! $SUDO apt-get install -y --no-install-recommends postgresql >/dev/null 2>&1; then
	$SUDO apt-get update -qq >/dev/null 2>&1 || true
	$SUDO apt-get install -y --no-install-recommends postgresql >/dev/null 2>&1 || {
		echo "install-postgresql.sh: apt-get install postgresql failed" >&2
		exit 0
	}
fi
if installed; then
	bins=(/usr/lib/postgresql/*/bin/postgres)
	echo "install-postgresql.sh: installed $("${bins[-1]}" --version)" >&2
fi
