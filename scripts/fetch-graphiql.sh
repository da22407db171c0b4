#!/usr/bin/env bash
# Fetch the GraphiQL page's browser files for the GraphQL gateway: pinned
# versions of graphiql (its UMD bundle and CSS) and react/react-dom (UMD),
# from the npm registry with `npm pack`, each checked against the integrity
# hash pinned below. The files go to gateway/internal/graphiql/assets/
# (git-ignored; the gateway embeds that directory), with a stamp naming
# the versions, so a rerun with the same pins does nothing.
#
# `make build` runs this before building the gateway. Needs npm: when it is
# missing and we are root (or have sudo), Debian's npm is installed;
# otherwise the script says so and fails.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT="$ROOT/gateway/internal/graphiql/assets"

# package@version  integrity (sha512, as the registry publishes it)  file in the package -> name served
PINS=(
	"graphiql@3.8.3 sha512-cuPDYtXVKV86Pu5PHBX642Odi/uVEE2y1Jxq5rGO/Qy1G2lRp7ZZ7a/T30RzxhuLSWo9zUbzq0P3U49//H0Ugw== graphiql.min.js graphiql.min.css"
	"react@18.3.1 sha512-wS+hAgJShR0KhEvPJArfuPVN1+Hz1t0Y6n5jLrGQbkb4urgPE/0Rve+1kMB1v/oWgHgm4WIcV+i7F2pTVj+2iQ== umd/react.production.min.js"
	"react-dom@18.3.1 sha512-5m4nQKp+rZRb09LNH59GM4BxTh9251/ylbKIbpe7TpGxfJ+9kv6BLkLBXIjjspbgbnIBNqlI23tRnTWT0snUIw== umd/react-dom.production.min.js"
)

stamp=$(printf '%s\n' "${PINS[@]}")
if [[ -f $OUT/.stamp ]] && [[ $(cat "$OUT/.stamp") == "$stamp" ]]; then
	exit 0
fi

if ! command -v npm >/dev/null; then
	SUDO=""
	if [[ $(id -u) != 0 ]]; then
		if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
			SUDO="sudo -n"
		else
			echo "fetch-graphiql.sh: npm is needed to fetch GraphiQL (install Debian's npm, or run as root)" >&2
			exit 1
		fi
	fi
	echo "fetch-graphiql.sh: installing Debian's npm" >&2
	export DEBIAN_FRONTEND=noninteractive
	if ! $SUDO apt-get install -y --no-install-recommends npm >/dev/null 2>&1; then
		$SUDO apt-get update -qq >/dev/null 2>&1 || true
		$SUDO apt-get install -y --no-install-recommends npm >/dev/null 2>&1 || {
			echo "fetch-graphiql.sh: apt-get install npm failed" >&2
			exit 1
		}
	fi
fi

TMP=$(mktemp -d "${TMPDIR:-/tmp}/fetch-graphiql.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
mkdir -p "$TMP/files"
for pin in "${PINS[@]}"; do
	read -r pkg integrity files <<<"$pin"
	got=$(cd "$TMP" && npm pack --silent --json "$pkg" 2>/dev/null |
		sed -n 's/.*"integrity": *"\([^"]*\)".*/\1/p' | head -n1) || true
	if [[ -z $got ]]; then
		echo "fetch-graphiql.sh: npm pack $pkg failed (is the npm registry reachable?)" >&2
		(cd "$TMP" && npm pack "$pkg" >/dev/null) || true
		exit 1
	fi
	if [[ $got != "$integrity" ]]; then
		echo "fetch-graphiql.sh: $pkg has integrity $got, pinned $integrity" >&2
		exit 1
	fi
	tgz=$(ls "$TMP"/*.tgz)
	# Check the tarball itself too, not only what npm reported (npm
	# checks it against the registry's metadata in any case).
	if command -v openssl >/dev/null; then
		sum="sha512-$(openssl dgst -sha512 -binary "$tgz" | base64 -w0)"
		if [[ $sum != "$integrity" ]]; then
			echo "fetch-graphiql.sh: $tgz hashes to $sum, pinned $integrity" >&2
			exit 1
		fi
	fi
	mkdir -p "$TMP/x"
	tar xzf "$tgz" -C "$TMP/x"
	for f in $files; do
		cp "$TMP/x/package/$f" "$TMP/files/$(basename "$f")"
	done
	cp "$TMP/x/package/LICENSE" "$TMP/files/LICENSE.${pkg%@*}" 2>/dev/null || true
	rm -rf "$TMP/x" "$tgz"
done

mkdir -p "$OUT"
find "$OUT" -mindepth 1 ! -name README.md -delete
cp "$TMP"/files/* "$OUT/"
printf '%s\n' "$stamp" >"$OUT/.stamp"
echo "fetch-graphiql.sh: $(ls "$TMP/files" | tr '\n' ' ')-> $OUT" >&2
