#!/usr/bin/env bash
# `npm test`: builds (the system tests run the compiled processes), then runs every test against real
# servers. Without MONGO_URL/AMQP_URL and without a Docker engine it starts scripts/local-infra.sh
# first, so one command works on a fresh machine.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if [ -z "${MONGO_URL:-}" ] && ! docker info >/dev/null 2>&1; then
  eval "$(bash scripts/local-infra.sh start | sed 's/^/export /')"
fi
npx tsc -b
# The console's bundle: the gateway serves it and console/test drives it in a browser.
npm run build -w console
exec npx jest --json --outputFile=jest-results.json "$@"
