#!/usr/bin/env bash
# Generates zz_generated.openapi.go (package definitions) with openapi-gen.
# The output is generated code: do not edit it by hand, edit this script and
# re-run it (directly, or via `go generate ./pkg/openapi/definitions` from the
# core module root).
#
# openapi-gen comes from k8s.io/kube-openapi at the version pinned in
# core/go.mod (tool directive); k8s.io/gengo/v2 is pinned there as well.
# API rule violations are reported to a temporary file and do not fail
# generation (set OPENAPI_VIOLATIONS_REPORT=path to keep the report).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
core="$(cd "${here}/../../.." && pwd)"   # module github.com/meshplane/meshplane/core
out_pkg="github.com/meshplane/meshplane/core/internal/openapi/definitions"
out_file="zz_generated.openapi.go"
max_bytes=1887436                        # 1.8 MiB; the repository rejects files over 2 MiB

input_pkgs=(
	k8s.io/apimachinery/pkg/apis/meta/v1
	k8s.io/apimachinery/pkg/runtime
	k8s.io/apimachinery/pkg/version
	k8s.io/apimachinery/pkg/util/intstr
	k8s.io/apimachinery/pkg/api/resource
	k8s.io/api/core/v1
	k8s.io/api/rbac/v1
	k8s.io/api/coordination/v1
	k8s.io/api/events/v1
	k8s.io/api/admissionregistration/v1
	k8s.io/api/authentication/v1
	k8s.io/api/authorization/v1
	k8s.io/api/certificates/v1
	k8s.io/api/autoscaling/v1
	k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1
	github.com/kcp-dev/sdk/apis/tenancy/v1alpha1
	github.com/kcp-dev/sdk/apis/core/v1alpha1
	github.com/kcp-dev/sdk/apis/apis/v1alpha1
	github.com/kcp-dev/sdk/apis/apis/v1alpha2
	github.com/kcp-dev/sdk/apis/topology/v1alpha1
	# Referenced by the kcp types above (Conditions); needed so every $ref resolves.
	github.com/kcp-dev/sdk/apis/third_party/conditions/apis/conditions/v1alpha1
)

report="${OPENAPI_VIOLATIONS_REPORT:-}"
if [[ -z "${report}" ]]; then
	report="$(mktemp)"
	trap 'rm -f "${report}"' EXIT
fi

cd "${core}"
go run k8s.io/kube-openapi/cmd/openapi-gen \
	--output-dir "${here}" \
	--output-pkg "${out_pkg}" \
	--output-file "${out_file}" \
	--go-header-file "${here}/boilerplate.go.txt" \
	--report-filename "${report}" \
	"${input_pkgs[@]}"

echo "openapi-gen: $(grep -c '^API rule violation' "${report}" || true) API rule violation(s) reported (not fatal)" >&2

size="$(wc -c <"${here}/${out_file}")"
if (( size > max_bytes )); then
	echo "error: ${out_file} is ${size} bytes (> ${max_bytes}); split the inputs into sub-packages" >&2
	exit 1
fi
echo "wrote ${here}/${out_file} (${size} bytes)" >&2
