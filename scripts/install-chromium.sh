#!/usr/bin/env bash
# Install Debian's chromium for the GraphiQL browser test (gateway/test/e2e).
# Idempotent: does nothing when /usr/bin/chromium exists. Needs root (or
# sudo) and an apt source; without them it says so and exits 0, and the
# browser test skips.
set -euo pipefail
if [[ -x /usr/bin/chromium ]]; then
	exit 0
fi
SUDO=""
if [[ $(id -u) != 0 ]]; then
	if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
		SUDO="sudo -n"
	else
		echo "install-chromium.sh: not root and no sudo; the GraphiQL browser test will skip" >&2
		exit 0
	fi
fi
export DEBIAN_FRONTEND=noninteractive
if ! $SUDO apt-get install -y --no-install-recommends chromium >/dev/null 2>&1; then
	$SUDO apt-get update -qq >/dev/null 2>&1 || true
	$SUDO apt-get install -y --no-install-recommends chromium >/dev/null 2>&1 || {
		echo "install-chromium.sh: apt-get install chromium failed; the GraphiQL browser test will skip" >&2
		exit 0
	}
fi
echo "install-chromium.sh: installed $(/usr/bin/chromium --version 2>/dev/null || echo chromium)" >&2
