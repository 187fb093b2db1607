#!/usr/bin/env bash
# Generates a Python client from an OpenAPI document with openapi-python-client (from PyPI, into a
# venv of its own under .local-infra, beside scripts/fuzz.sh's), as a Python integrator would.
# Usage: scripts/python-client.sh <openapi.json> <output-directory>
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.local-infra/venv-python-client"
GENERATOR_VERSION=0.29.1
document=$1 output=$2

if [ ! -x "$VENV/bin/openapi-python-client" ]; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q "openapi-python-client==$GENERATOR_VERSION"
fi
"$VENV/bin/openapi-python-client" generate --path "$document" --output-path "$output" --meta none --overwrite
