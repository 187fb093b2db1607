#!/usr/bin/env bash
# Go 1.26 or later, for clients/typescript/test/go-client.test.ts: oapi-codegen v2.8.2 needs Go 1.25
# and its runtime v1.9.0 needs 1.26 (Debian's golang-go is older). Prints the directory of the go the
# test will use. That is the first of .local-infra/go/bin/go, /usr/local/go/bin/go and the go on PATH
# (the test's own order) when it is 1.26 or later; otherwise the latest Go 1.26 toolchain listed by the
# Go module proxy (golang.org/toolchain: the zip the go command itself fetches for GOTOOLCHAIN),
# unpacked into .local-infra/go.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
MINIMUM_MINOR=26
PROXY=https://proxy.golang.org/golang.org/toolchain/@v

# curl where there is one; else Node's fetch (.ci/run has installed Node before this runs).
download() {
  if command -v curl >/dev/null 2>&1; then
    curl -fsSL --retry 3 -o "$2" "$1"
  else
    node -e 'fetch(process.argv[1]).then(async (r) => { if (!r.ok) throw new Error(`${r.status} ${process.argv[1]}`); require("fs").writeFileSync(process.argv[2], Buffer.from(await r.arrayBuffer())); })' "$1" "$2"
  fi
}

minor_of() { "$1" version 2>/dev/null | sed -n 's/^go version go1\.\([0-9][0-9]*\).*/\1/p'; }

current=
for candidate in "$PWD/.local-infra/go/bin/go" /usr/local/go/bin/go "$(command -v go || true)"; do
  if [ -n "$candidate" ] && [ -x "$candidate" ]; then current=$candidate; break; fi
done
minor=
if [ -n "$current" ]; then minor=$(minor_of "$current"); fi
if [ -n "$minor" ] && [ "$minor" -ge "$MINIMUM_MINOR" ]; then
  dirname "$current"
  exit 0
fi

echo "Go 1.$MINIMUM_MINOR or later is needed (found: ${current:-no go}${minor:+, go1.$minor}): fetching it from the Go module proxy" >&2
case "$(uname -m)" in
  x86_64 | amd64) arch=amd64 ;;
  aarch64 | arm64) arch=arm64 ;;
  *) echo "no Go toolchain known for $(uname -m)" >&2 && exit 1 ;;
esac
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
download "$PROXY/list" "$scratch/list"
version=$(sed -n "s/^v0\.0\.1-go\(1\.$MINIMUM_MINOR\.[0-9][0-9]*\)\.linux-$arch\$/\1/p" "$scratch/list" | sort -t. -k3,3n | tail -1)
[ -n "$version" ] || { echo "no go1.$MINIMUM_MINOR.x toolchain for linux-$arch listed at $PROXY/list" >&2 && exit 1; }
download "$PROXY/v0.0.1-go$version.linux-$arch.zip" "$scratch/go.zip"
python3 -m zipfile -e "$scratch/go.zip" "$scratch/unpacked"
root="$scratch/unpacked/golang.org/toolchain@v0.0.1-go$version.linux-$arch"
# A module zip keeps no file modes: the programs are made executable, as the go command does with a
# toolchain it downloads.
chmod +x "$root"/bin/* "$root"/pkg/tool/*/*
mkdir -p .local-infra
rm -rf .local-infra/go
mv "$root" .local-infra/go
"$PWD/.local-infra/go/bin/go" version >&2
echo "$PWD/.local-infra/go/bin"
