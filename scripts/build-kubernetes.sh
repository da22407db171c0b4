#!/usr/bin/env bash
# Build the Kubernetes binaries the test cluster runs (sdk/testing/kubecluster)
# from the module proxy's k8s.io/kubernetes, pinned by tools/kubernetes, and
# CoreDNS, pinned by tools/coredns, into a cache outside the repository:
#   ${MESHPLANE_CACHE:-$HOME/.cache/meshplane}/kubernetes/<version>/
#   ${MESHPLANE_CACHE:-$HOME/.cache/meshplane}/coredns/<version>/coredns
# A binary already there is not built again (delete it to rebuild). Builds run
# one at a time under nice; cold and warm times are in docs/test-cluster.md.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
mod="$root/tools/kubernetes"
cache="${MESHPLANE_CACHE:-$HOME/.cache/meshplane}"
# required version of module $2 in go.mod $1
required() { awk -v m="$2" '$1 == m && $2 ~ /^v/ {print $2; exit} $1 == "require" && $2 == m {print $3; exit}' "$1"; }
version=$(required "$mod/go.mod" k8s.io/kubernetes)
out="$cache/kubernetes/$version"
mkdir -p "$out"
IFS=. read -r major minor _ <<<"${version#v}"
ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$version"
ldflags+=" -X k8s.io/component-base/version.gitMajor=$major -X k8s.io/component-base/version.gitMinor=$minor"
ldflags+=" -X k8s.io/component-base/version.gitTreeState=clean"
ldflags+=" -X k8s.io/client-go/pkg/version.gitVersion=$version"
for cmd in kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy; do
	[[ -x "$out/$cmd" ]] && continue
	echo "build-kubernetes.sh: building $cmd $version" >&2
	(cd "$mod" && GOWORK=off GOFLAGS=-mod=mod CGO_ENABLED=0 nice go build -trimpath -ldflags "$ldflags" \
		-o "$out/$cmd.tmp" "k8s.io/kubernetes/cmd/$cmd")
	mv "$out/$cmd.tmp" "$out/$cmd"
done
dns="$root/tools/coredns"
dnsversion=$(required "$dns/go.mod" github.com/coredns/coredns)
dnsout="$cache/coredns/$dnsversion"
if [[ ! -x "$dnsout/coredns" ]]; then
	echo "build-kubernetes.sh: building coredns $dnsversion" >&2
	mkdir -p "$dnsout"
	(cd "$dns" && GOWORK=off GOFLAGS=-mod=mod CGO_ENABLED=0 nice go build -trimpath \
		-ldflags "-s -w -X github.com/coredns/coredns/coremain.GitCommit=$dnsversion" -o "$dnsout/coredns.tmp" .)
	mv "$dnsout/coredns.tmp" "$dnsout/coredns"
fi
