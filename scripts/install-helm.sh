#!/usr/bin/env bash
# Installs the pinned helm CLI into bin/ (idempotent: kept when bin/helm was
# installed at the pinned version). The charts' tests use it.
set -euo pipefail
HELM_VERSION=v3.22.0
root=$(cd "$(dirname "$0")/.." && pwd)
bin="$root/bin"
# `go install` leaves helm's own version string without the patch level, so
# the installed version is kept in a stamp file.
stamp="$bin/.helm-version"
if [ -x "$bin/helm" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$HELM_VERSION" ]; then
	exit 0
fi
mkdir -p "$bin"
# Outside the workspace: helm's own go.mod pins its dependencies.
GOWORK=off GOBIN="$bin" go install "helm.sh/helm/v3/cmd/helm@$HELM_VERSION"
echo "$HELM_VERSION" > "$stamp"
