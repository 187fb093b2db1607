#!/usr/bin/env bash
# Real infrastructure for tests and local runs on a machine without Docker:
#   RabbitMQ (Debian rabbitmq-server), Redis (Debian redis-server) and a MongoDB-wire-compatible
#   server (mongo-java-server with its H2 backend, from Maven Central), all on 127.0.0.1 only.
#   FerretDB 1.24 (SQLite) was tried first and rejected: it loses concurrent updates to one
#   document (50 parallel conditional $inc: 46 acknowledged, counter read 6), which breaks
#   redemption limits and the outbox; mongo-java-server applies each update atomically.
# Usage: scripts/local-infra.sh start|stop|status|env
#        scripts/local-infra.sh stop-rabbitmq|start-rabbitmq|stop-mongo|kill-mongo|start-mongo   (fault drills)
# Idempotent: `start` finds running servers and leaves them alone. State lives in .local-infra/.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
STATE="${LOCAL_INFRA_DIR:-$ROOT/.local-infra}"
MONGO_PORT="${LOCAL_MONGO_PORT:-27017}"
AMQP_PORT="${LOCAL_AMQP_PORT:-5672}"
REDIS_PORT="${LOCAL_REDIS_PORT:-6379}"
MONGO_HOME="$STATE/mongo-local"
RABBIT_NODE="rabbit-local@localhost"

mkdir -p "$STATE"/{logs,mongo-local,rabbitmq,redis}

log() { printf '[local-infra] %s\n' "$*" >&2; }

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

wait_for_port() {
  local port=$1 name=$2 tries=${3:-120}
  for _ in $(seq "$tries"); do
    port_open "$port" && return 0
    sleep 0.5
  done
  log "$name did not open 127.0.0.1:$port; see $STATE/logs/"
  return 1
}

apt_install() {
  local missing=()
  for pkg in "$@"; do dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  log "installing ${missing[*]} from Debian's packages"
  if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

build_mongo_server() {
  local src="$ROOT/scripts/mongo-local"
  local built="$MONGO_HOME/classes/MongoLocal.class"
  [ -f "$built" ] && [ "$built" -nt "$src/pom.xml" ] && [ -z "$(find "$src/src" -name '*.java' -newer "$built")" ] && return 0
  command -v java >/dev/null && command -v mvn >/dev/null || apt_install default-jdk-headless maven
  log "fetching mongo-java-server from Maven Central and compiling its launcher"
  (cd "$src" && mvn -q -B dependency:copy-dependencies -DoutputDirectory="$MONGO_HOME/lib" >"$STATE/logs/mongo-build.log" 2>&1) \
    || { log "Maven failed; see $STATE/logs/mongo-build.log"; exit 1; }
  # shellcheck disable=SC2046 # the source file names have no spaces
  javac -nowarn -cp "$MONGO_HOME/lib/*" -d "$MONGO_HOME/classes" $(find "$src/src" -name '*.java')
}

start_mongo() {
  # Built even when a server already answers: the tests start disposable servers from this launcher.
  build_mongo_server
  if port_open "$MONGO_PORT"; then log "MongoDB-compatible server already on :$MONGO_PORT"; return 0; fi
  # Shenandoah: pauses under a millisecond; SerialGC's young collections stopped the server for
  # 150-700 ms on a busy machine (bench/README.md, "Where the tail comes from"). The heap starts
  # small and grows as needed: the live set is tens of MB; the shared server holds every test's databases.
  nohup java -XX:+UseShenandoahGC -Xms32m -Xmx512m -cp "$MONGO_HOME/classes:$MONGO_HOME/lib/*" MongoLocal \
    "$MONGO_HOME/data.mv" "$MONGO_PORT" >>"$STATE/logs/mongo-local.log" 2>&1 &
  echo $! >"$STATE/mongo-local.pid"
  wait_for_port "$MONGO_PORT" mongo-local
}

# The crash drill: SIGKILL leaves the server no chance to flush; acknowledged writes must survive it.
kill_mongo() {
  if [ -f "$STATE/mongo-local.pid" ]; then kill -9 "$(cat "$STATE/mongo-local.pid")" 2>/dev/null || true; rm -f "$STATE/mongo-local.pid"; fi
  for _ in $(seq 40); do port_open "$MONGO_PORT" || return 0; sleep 0.25; done
}

stop_mongo() {
  if [ -f "$STATE/mongo-local.pid" ]; then kill "$(cat "$STATE/mongo-local.pid")" 2>/dev/null || true; rm -f "$STATE/mongo-local.pid"; fi
  for _ in $(seq 40); do port_open "$MONGO_PORT" || return 0; sleep 0.25; done
}

rabbit_env() {
  export RABBITMQ_NODENAME="$RABBIT_NODE"
  export RABBITMQ_NODE_IP_ADDRESS=127.0.0.1
  export RABBITMQ_NODE_PORT="$AMQP_PORT"
  export RABBITMQ_DIST_PORT=$((AMQP_PORT + 20000))
  export RABBITMQ_MNESIA_BASE="$STATE/rabbitmq/mnesia"
  export RABBITMQ_LOG_BASE="$STATE/logs"
  export RABBITMQ_PID_FILE="$STATE/rabbitmq/rabbit.pid"
  export RABBITMQ_ENABLED_PLUGINS_FILE="$STATE/rabbitmq/enabled_plugins"
  export RABBITMQ_CONFIG_FILE="$STATE/rabbitmq/rabbitmq"
  [ -f "$RABBITMQ_ENABLED_PLUGINS_FILE" ] || echo '[].' >"$RABBITMQ_ENABLED_PLUGINS_FILE"
  # The broker refuses new publishes below this much free disk; the default suits laptops badly.
  [ -f "$RABBITMQ_CONFIG_FILE.conf" ] || printf 'disk_free_limit.absolute = 200MB\nloopback_users = none\n' >"$RABBITMQ_CONFIG_FILE.conf"
}

start_rabbitmq() {
  if port_open "$AMQP_PORT"; then log "RabbitMQ already on :$AMQP_PORT"; return 0; fi
  apt_install rabbitmq-server
  rabbit_env
  # epmd is started by the broker when absent; -detached returns at once.
  /usr/lib/rabbitmq/bin/rabbitmq-server -detached >>"$STATE/logs/rabbitmq-start.log" 2>&1
  wait_for_port "$AMQP_PORT" RabbitMQ 240
}

stop_rabbitmq() {
  rabbit_env
  /usr/lib/rabbitmq/bin/rabbitmqctl -n "$RABBIT_NODE" stop >/dev/null 2>&1 || true
  for _ in $(seq 60); do port_open "$AMQP_PORT" || return 0; sleep 0.25; done
}

start_redis() {
  if port_open "$REDIS_PORT"; then log "Redis already on :$REDIS_PORT"; return 0; fi
  apt_install redis-server
  redis-server --bind 127.0.0.1 --port "$REDIS_PORT" --daemonize yes --save '' --appendonly no \
    --dir "$STATE/redis" --pidfile "$STATE/redis/redis.pid" --logfile "$STATE/logs/redis.log"
  wait_for_port "$REDIS_PORT" Redis
}

stop_redis() {
  if [ -f "$STATE/redis/redis.pid" ]; then kill "$(cat "$STATE/redis/redis.pid")" 2>/dev/null || true; fi
  for _ in $(seq 40); do port_open "$REDIS_PORT" || return 0; sleep 0.25; done
}

print_env() {
  echo "MONGO_URL=mongodb://127.0.0.1:$MONGO_PORT"
  echo "AMQP_URL=amqp://guest:guest@127.0.0.1:$AMQP_PORT"
  echo "REDIS_URL=redis://127.0.0.1:$REDIS_PORT"
}

status() {
  local rc=0
  for pair in "MongoDB-compatible:$MONGO_PORT" "RabbitMQ:$AMQP_PORT" "Redis:$REDIS_PORT"; do
    if port_open "${pair##*:}"; then echo "${pair%%:*} up on 127.0.0.1:${pair##*:}"; else echo "${pair%%:*} down"; rc=1; fi
  done
  return $rc
}

# The docs page test renders /docs in a real headless browser.
ensure_chromium() { command -v chromium >/dev/null || apt_install chromium; }

case "${1:-}" in
  start) ensure_chromium; start_mongo; start_rabbitmq; start_redis; print_env ;;
  stop) stop_redis; stop_rabbitmq; stop_mongo ;;
  status) status ;;
  env) print_env ;;
  start-rabbitmq) start_rabbitmq ;;
  stop-rabbitmq) stop_rabbitmq ;;
  start-mongo) start_mongo ;;
  stop-mongo) stop_mongo ;;
  kill-mongo) kill_mongo ;;
  start-redis) start_redis ;;
  stop-redis) stop_redis ;;
  *) echo "usage: $0 start|stop|status|env|start-rabbitmq|stop-rabbitmq|start-mongo|stop-mongo|kill-mongo|start-redis|stop-redis" >&2; exit 2 ;;
esac
