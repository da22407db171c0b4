#!/usr/bin/env bash
# Regenerates what is derived from the examples' Go types:
#   <example>/api/v1alpha1/zz_generated.deepcopy.go  (controller-gen object)
#   <example>/config/crd/*.yaml                      (controller-gen crd)
#   <example>/config/kcp/*.yaml                      (Meshplane's apigen: APIResourceSchema
#                                                     and APIExport; apigen keeps the export's
#                                                     permission claims, it only sets spec.resources)
# CONTROLLER_GEN and APIGEN may point at prebuilt binaries.
set -euo pipefail

CONTROLLER_TOOLS_VERSION=v0.21.0
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$here"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [[ -n "${CONTROLLER_GEN:-}" ]]; then
	controller_gen=("$CONTROLLER_GEN")
else
	controller_gen=(go run "sigs.k8s.io/controller-tools/cmd/controller-gen@${CONTROLLER_TOOLS_VERSION}")
fi
if [[ -n "${APIGEN:-}" ]]; then
	apigen=$APIGEN
else
	apigen=$tmp/apigen
	(cd ../core && go build -o "$apigen" ./cmd/apigen)
fi

for ex in mongodb postgres; do
	"${controller_gen[@]}" object paths=./$ex/api/...
	rm -rf "$tmp/crd"
	"${controller_gen[@]}" crd:crdVersions=v1 paths=./$ex/api/... output:crd:artifacts:config="$tmp/crd"
	rm -f $ex/config/crd/*.yaml
	cp "$tmp"/crd/*.yaml $ex/config/crd/
	"$apigen" --input-dir $ex/config/crd --output-dir $ex/config/kcp 2>/dev/null
done
