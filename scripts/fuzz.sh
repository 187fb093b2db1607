#!/usr/bin/env bash
# Schema fuzzing of a running gateway with Schemathesis (from PyPI, installed into .local-infra/venv):
# zero 5xx, and every response conforming to /api/v1/openapi.json (status codes, content types,
# bodies, headers). The public API runs with an API key, the admin API with the admin token.
# One worker: with two, hypothesis occasionally trips a CPython 3.11 ast.parse race and the run errors.
# Usage: scripts/fuzz.sh <gateway-url> <api-key> <admin-token> [examples-per-operation]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SCHEMATHESIS_VERSION=4.32.5
gateway=$1 key=$2 admin=$3 examples=${4:-25}

source "$ROOT/scripts/python-venv.sh"
python_venv venv "schemathesis==$SCHEMATHESIS_VERSION"

checks=not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance,response_headers_conformance
run() {
  "$VENV/bin/schemathesis" run "$gateway/api/v1/openapi.json" --url "$gateway" --checks "$checks" \
    --max-examples "$examples" --workers 1 --seed 20261121 --no-color "$@"
}
run -H "Authorization: Bearer $key" --exclude-path-regex '^/admin'
run -H "Authorization: Bearer $admin" --include-path-regex '^/admin'
