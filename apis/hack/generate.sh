#!/usr/bin/env bash
# Regenerates everything derived from the Go types in core/v1alpha1:
#   core/v1alpha1/zz_generated.deepcopy.go   (controller-gen object)
#   config/crd/*.yaml                         (controller-gen crd)
#   config/kcp/*.yaml                         (Meshplane's apigen: APIResourceSchemas + APIExport)
# Run from anywhere: apis/hack/generate.sh, or `make generate` at the top.
#
# CONTROLLER_GEN and APIGEN may point at prebuilt binaries; by default the
# pinned controller-gen is run through `go run` and apigen is built from ../core.
set -euo pipefail

CONTROLLER_TOOLS_VERSION=v0.21.0

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$here"

if [[ -n "${CONTROLLER_GEN:-}" ]]; then
	controller_gen=("$CONTROLLER_GEN")
else
	controller_gen=(go run "sigs.k8s.io/controller-tools/cmd/controller-gen@${CONTROLLER_TOOLS_VERSION}")
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [[ -n "${APIGEN:-}" ]]; then
	apigen=$APIGEN
else
	apigen=$tmp/apigen
	(cd ../core && go build -o "$apigen" ./cmd/apigen)
fi

"${controller_gen[@]}" object paths=./core/...

# Write the CRDs to a scratch directory first, so a CRD that is no longer
# generated disappears from config/crd.
"${controller_gen[@]}" crd:crdVersions=v1 paths=./core/... output:crd:artifacts:config="$tmp/crd"
rm -f config/crd/*.yaml
cp "$tmp"/crd/*.yaml config/crd/

# apigen keeps the names of schemas whose spec did not change and, in an
# existing APIExport file, replaces only spec.resources; the permission
# claims come from the template in hack/.
cp hack/apiexport-core.platform-mesh.io.yaml config/kcp/apiexport-core.platform-mesh.io.yaml
"$apigen" --input-dir config/crd --output-dir config/kcp

# apigen does not delete schemas of CRDs that are gone; do it here.
for f in config/kcp/apiresourceschema-*.yaml; do
	[[ -e "$f" ]] || continue
	rest=${f#config/kcp/apiresourceschema-}   # <plural>.<group>.yaml
	plural=${rest%%.*}
	group=${rest#*.}
	group=${group%.yaml}
	if [[ ! -e "config/crd/${group}_${plural}.yaml" ]]; then
		rm "$f"
		echo "removed $f: no CRD for ${plural}.${group}" >&2
	fi
done

gofmt -l ./core | { ! grep .; } || { echo "gofmt needed after generation" >&2; exit 1; }
