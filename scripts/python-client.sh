#!/usr/bin/env bash
# Generates a Python client from an OpenAPI document with openapi-python-client (from PyPI, into a
# venv of its own under .local-infra, beside scripts/fuzz.sh's), as a Python integrator would.
# Usage: scripts/python-client.sh <openapi.json> <output-directory>
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
GENERATOR_VERSION=0.29.1
document=$1 output=$2

source "$ROOT/scripts/python-venv.sh"
python_venv venv-python-client "openapi-python-client==$GENERATOR_VERSION"
"$VENV/bin/openapi-python-client" generate --path "$document" --output-path "$output" --meta none --overwrite
