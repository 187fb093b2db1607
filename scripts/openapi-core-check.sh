#!/usr/bin/env bash
# Validates recorded answers against an OpenAPI document with openapi-core (from PyPI, into a venv of
# its own under .local-infra, beside the other Python tools'), as a Python integrator's tests would.
# Usage: scripts/openapi-core-check.sh <openapi.json> <exchanges.json>
# Prints one line per answer the document does not describe, and exits 1 if there is any.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VALIDATOR_VERSION=0.23.1

source "$ROOT/scripts/python-venv.sh"
python_venv venv-openapi-core "openapi-core==$VALIDATOR_VERSION"
exec "$VENV/bin/python" "$ROOT/scripts/openapi_core_check.py" "$@"
