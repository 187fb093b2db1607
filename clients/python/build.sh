#!/usr/bin/env bash
# Builds the Python SDK's wheel as a release would:
#   1. the document as the gateway serves it (gateway/dist: `npm run build` first);
#   2. affiliate_client.generated from it, by openapi-python-client (pinned, from PyPI; ruff, its
#      formatting hook, pinned too, so that one document always gives the same code);
#   3. the wheel, by hatchling, from a staging copy, so the work tree is left as it is.
# The generated layer is a build product like dist/ (README.md, "How it is built").
# Usage: clients/python/build.sh [output-directory]   (default clients/python/dist); prints the wheel's path.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
mkdir -p "${1:-$HERE/dist}"
out="$(cd "${1:-$HERE/dist}" && pwd)"
GENERATOR_VERSION=0.29.1 # the same as scripts/python-client.sh's
RUFF_VERSION=0.17.6
BUILD_VERSION=1.6.1
HATCHLING_VERSION=1.33.0

source "$ROOT/scripts/python-venv.sh"
python_venv venv-python-sdk "openapi-python-client==$GENERATOR_VERSION" "ruff==$RUFF_VERSION" "build==$BUILD_VERSION" "hatchling==$HATCHLING_VERSION"

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
cp -r "$HERE/pyproject.toml" "$HERE/README.md" "$HERE/CHANGELOG.md" "$HERE/src" "$stage/"
rm -rf "$stage/src/affiliate_client/generated"
find "$stage/src" -name __pycache__ -prune -exec rm -rf {} +
node "$ROOT/gateway/dist/openapi/print.js" >"$stage/openapi.json"
# The generator runs ruff from PATH as its post-generation hook.
if ! (cd "$stage" && PATH="$VENV/bin:$PATH" openapi-python-client generate --path openapi.json --output-path src/affiliate_client/generated --meta none >generate.log 2>&1); then
  cat "$stage/generate.log" >&2
  exit 1
fi
# openapi-python-client 0.29.1 annotates a required body of several content types (POST /join/{slug}:
# JSON or a form) `| Unset` without importing Unset, so that module fails to import (upstream issue
# #1451): the import is added where it is missing, and ruff then proves no generated name is undefined.
generated="$stage/src/affiliate_client/generated"
grep -rlE '\| Unset\b' "$generated/api" | xargs -r grep -L 'import .*\bUnset\b' \
  | xargs -r sed -i 's/^from \.\.\.types import UNSET, Response$/from ...types import UNSET, Response, Unset/' || true
"$VENV/bin/ruff" check --no-cache --isolated --select F821 --quiet "$generated" >&2
if ! "$VENV/bin/python" -m build --wheel --no-isolation --outdir "$out" "$stage" >"$stage/build.log" 2>&1; then
  cat "$stage/build.log" >&2
  exit 1
fi
version=$("$VENV/bin/python" -c 'import sys, tomllib; print(tomllib.load(open(sys.argv[1], "rb"))["project"]["version"])' "$HERE/pyproject.toml")
echo "$out/affiliate_client-$version-py3-none-any.whl"
