#!/usr/bin/env bash
# Validates recorded answers against an OpenAPI document with openapi-core (from PyPI, into a venv of
# its own under .local-infra, beside the other Python tools'), as a Python integrator's tests would.
# Usage: scripts/openapi-core-check.sh <openapi.json> <exchanges.json>
# Prints one line per answer the document does not describe, and exits 1 if there is any.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.local-infra/venv-openapi-core"
VALIDATOR_VERSION=0.23.1

if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c 'import openapi_core' 2>/dev/null; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q "openapi-core==$VALIDATOR_VERSION"
fi
exec "$VENV/bin/python" "$ROOT/scripts/openapi_core_check.py" "$@"
