#!/usr/bin/env bash
# The production-shaped Temporal (docs/deploy.md), beside the local stack's Slurm:
#   - PostgreSQL (Debian's binaries, our own pg_ctl cluster on 127.0.0.1, TLS on, scram passwords;
#     the system service is never started) holding Temporal's `temporal` and `temporal_visibility`
#     databases, whose schema temporal-sql-tool creates and updates;
#   - temporal-server v1.29.1 (frontend, history, matching and worker services in one process) with
#     mutual TLS on the frontend and between its services, from a throwaway CA made here (openssl);
#   - the namespace `infersweep` with the sweeps' search attributes registered;
#   - the Web UI server talking to the frontend over mutual TLS;
#   - Slurm, sshd and the simulator from scripts/stack.sh (same INFERSWEEP_STACK_SLOT), whose
#     slurm.conf has the two cluster partitions `east` (node1,node2) and `west` (node3,node4).
# Usage: scripts/stack-production.sh up|down|status|env|restart-temporal|restart-postgres|stop-temporal|start-temporal|stop-postgres|start-postgres
# Idempotent. State under $INFERSWEEP_DATA/production (default .infersweep/production, git-ignored).
# Ports 7632-7690 by default (INFERSWEEP_PRODUCTION_PORT_BASE=7600), apart from every slot's ports.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=scripts/lib.sh
. "$ROOT/scripts/lib.sh"

STATE=$INFERSWEEP_DATA/production
BASE=${INFERSWEEP_PRODUCTION_PORT_BASE:-7600}
PG_PORT=$((BASE + 32))
FRONTEND_PORT=$((BASE + 33))
HISTORY_PORT=$((BASE + 34))
MATCHING_PORT=$((BASE + 35))
WORKER_PORT=$((BASE + 39))
FRONTEND_HTTP_PORT=$((BASE + 43))
MEMBERSHIP_BASE=$((BASE + 50)) # +3 frontend, +4 history, +5 matching, +9 worker
METRICS_PORT=$((BASE + 90))
UI_PORT=$((BASE + 80))
NAMESPACE=${INFERSWEEP_PRODUCTION_NAMESPACE:-infersweep}
RETENTION=${INFERSWEEP_PRODUCTION_RETENTION:-30d}
# client certificates made at set-up: the CLI and one worker per cluster profile
CLIENTS=(cli worker-east worker-west)
# Search attributes every sweep carries (the same names as scripts/stack.sh)
SEARCH_ATTRIBUTES=(InfersweepOrientation InfersweepModel InfersweepCluster InfersweepConfig InfersweepStatus InfersweepRegression)
PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n1 || true)
TOOLS=$INFERSWEEP_TOOLS/bin

log() { echo "[stack-production $(date +%T)] $*" >&2; }
die() { echo "[stack-production] ERROR: $*" >&2; exit 1; }
# shellcheck source=scripts/stack-lib.sh
. "$ROOT/scripts/stack-lib.sh"
# PostgreSQL refuses to run as root: as root, its commands run as Debian's `postgres` user
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
pg_owner() { if [ "$(id -u)" = 0 ]; then chown -R postgres:postgres "$@"; fi; }

need_tools() {
  local b
  for b in temporal temporal-server temporal-sql-tool temporal-ui-server; do
    [ -x "$TOOLS/$b" ] || die "$TOOLS/$b missing: run 'npm run setup' (scripts/setup-production.sh builds it)"
  done
  [ -n "$PGBIN" ] && [ -x "$PGBIN/pg_ctl" ] || die "PostgreSQL is not installed: run 'npm run setup' (scripts/setup-production.sh)"
  [ -d "$INFERSWEEP_TOOLS/temporal-schema/postgresql/v12" ] || die "Temporal's schema files missing: run 'npm run setup'"
  command -v openssl >/dev/null || die "openssl missing: run 'npm run setup'"
}

# ------------------------------------------------------------------ secrets
# Generated once; files 0600 under $STATE/secrets. They reach processes through the environment
# or files, never through an argv.
secrets_up() {
  mkdir -p "$STATE"/{secrets,log,pids,temporal/config,ui/config}
  chmod 700 "$STATE/secrets"
  [ -s "$STATE/secrets/pg-temporal-password" ] || (umask 077; openssl rand -hex 24 > "$STATE/secrets/pg-temporal-password")
  chmod 600 "$STATE/secrets/pg-temporal-password"
}

# ------------------------------------------------------------------ throwaway CA and certificates
tls_up() {
  local d=$STATE/tls
  mkdir -p "$d/clients"
  chmod 755 "$d"
  if [ ! -s "$d/ca.pem" ] || ! openssl x509 -checkend 86400 -noout -in "$d/ca.pem" >/dev/null 2>&1; then
    log "throwaway CA"
    rm -rf "$d"; mkdir -p "$d/clients"
    (umask 077; openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$d/ca.key" 2>/dev/null)
    openssl req -x509 -new -key "$d/ca.key" -days 365 -out "$d/ca.pem" -subj "/O=infersweep/CN=infersweep throwaway CA" \
      -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign"
  fi
  issue() { # name CN extendedKeyUsage [subjectAltName]
    local name=$1 cn=$2 eku=$3 san=${4:-}
    [ -s "$d/$name.pem" ] && openssl verify -CAfile "$d/ca.pem" "$d/$name.pem" >/dev/null 2>&1 && return 0
    (umask 077; openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$d/$name.key" 2>/dev/null)
    openssl req -new -key "$d/$name.key" -subj "/O=infersweep/CN=$cn" -out "$d/$name.csr"
    {
      echo "basicConstraints=critical,CA:FALSE"
      echo "keyUsage=critical,digitalSignature"
      echo "extendedKeyUsage=$eku"
      [ -z "$san" ] || echo "subjectAltName=$san"
    } > "$d/$name.ext"
    openssl x509 -req -in "$d/$name.csr" -CA "$d/ca.pem" -CAkey "$d/ca.key" -CAcreateserial -days 365 \
      -extfile "$d/$name.ext" -out "$d/$name.pem" 2>/dev/null
    rm -f "$d/$name.csr" "$d/$name.ext"
  }
  # the frontend's and the internal services' certificate (served and presented between services)
  issue server localhost serverAuth,clientAuth "DNS:localhost,IP:127.0.0.1"
  local c
  for c in "${CLIENTS[@]}"; do issue "clients/$c" "$c" clientAuth; done
  chmod 755 "$d" "$d/clients"; chmod 644 "$d"/*.pem "$d"/clients/*.pem; chmod 600 "$d"/*.key "$d"/clients/*.key
  # PostgreSQL's own copy of the server key (it insists on owning a 0600 key)
  mkdir -p "$STATE/pgtls"
  cp "$d/server.pem" "$d/server.key" "$d/ca.pem" "$STATE/pgtls/"
  chmod 700 "$STATE/pgtls"; chmod 600 "$STATE/pgtls/server.key"
  pg_owner "$STATE/pgtls"
}

# ------------------------------------------------------------------ PostgreSQL
pg_env() { # the sql tool's connection, password from the secrets file (never argv)
  export SQL_PLUGIN=postgres12 SQL_HOST=127.0.0.1 SQL_PORT=$PG_PORT SQL_USER=temporal
  SQL_PASSWORD=$(cat "$STATE/secrets/pg-temporal-password"); export SQL_PASSWORD
  export SQL_TLS=true SQL_TLS_CA_FILE=$STATE/tls/ca.pem SQL_TLS_SERVER_NAME=localhost
}
pg_ready() { "$PGBIN/pg_isready" -q -h 127.0.0.1 -p "$PG_PORT" >/dev/null 2>&1; }
postgres_start() {
  pg_ready && return 0
  as_pg "$PGBIN/pg_ctl" -D "$STATE/pg/data" -l "$STATE/pg/run/postgres.log" -w -t 60 start >/dev/null \
    || die "PostgreSQL did not start (see $STATE/pg/run/postgres.log)"
}
postgres_stop() {
  [ -s "$STATE/pg/data/postmaster.pid" ] || return 0
  as_pg "$PGBIN/pg_ctl" -D "$STATE/pg/data" -m fast -w -t 60 stop >/dev/null 2>&1 || true
}
postgres_up() {
  mkdir -p "$STATE/pg/run"
  chmod 755 "$STATE/pg"
  pg_owner "$STATE/pg/run"
  if [ ! -s "$STATE/pg/data/PG_VERSION" ]; then
    log "initdb ($PGBIN)"
    rm -rf "$STATE/pg/data"; mkdir -p "$STATE/pg/data"; chmod 700 "$STATE/pg/data"; pg_owner "$STATE/pg/data"
    as_pg "$PGBIN/initdb" -D "$STATE/pg/data" -U postgres --auth-local=peer --auth-host=scram-sha-256 \
      -E UTF8 --locale=C.UTF-8 >"$STATE/log/initdb.log" 2>&1 || die "initdb failed (see $STATE/log/initdb.log)"
    cat >> "$STATE/pg/data/postgresql.conf" <<EOF
# infersweep scripts/stack-production.sh
listen_addresses = '127.0.0.1'
port = $PG_PORT
unix_socket_directories = '$STATE/pg/run'
ssl = on
ssl_cert_file = '$STATE/pgtls/server.pem'
ssl_key_file = '$STATE/pgtls/server.key'
ssl_ca_file = '$STATE/pgtls/ca.pem'
password_encryption = scram-sha-256
max_connections = 100
shared_buffers = 64MB
EOF
    # TCP only with TLS and a password; the socket only for the postgres OS user
    cat > "$STATE/pg/data/pg_hba.conf" <<EOF
local   all   postgres                  peer
hostssl all   temporal  127.0.0.1/32    scram-sha-256
EOF
    pg_owner "$STATE/pg/data"
  fi
  postgres_start
  # the role Temporal uses (password from the secrets file, through psql's stdin)
  local pw; pw=$(cat "$STATE/secrets/pg-temporal-password")
  as_pg "$PGBIN/psql" -q -h "$STATE/pg/run" -p "$PG_PORT" -U postgres -d postgres -v ON_ERROR_STOP=1 >/dev/null <<EOF \
    || die "creating the temporal role failed"
SELECT 'CREATE ROLE temporal LOGIN CREATEDB' WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'temporal') \gexec
ALTER ROLE temporal PASSWORD '$pw';
EOF
}

schema_up() { # temporal-sql-tool: create the databases, then set up or update the schema
  ( pg_env
    local db dir
    for db in temporal temporal_visibility; do
      case $db in temporal) dir=temporal ;; *) dir=visibility ;; esac
      "$TOOLS/temporal-sql-tool" --db "$db" create-database >>"$STATE/log/schema.log" 2>&1 || true
      # setup-schema -v 0.0 only creates the version table (no-op when it exists); update-schema
      # applies every versioned step above the recorded version
      "$TOOLS/temporal-sql-tool" --db "$db" setup-schema -v 0.0 >>"$STATE/log/schema.log" 2>&1 || true
      "$TOOLS/temporal-sql-tool" --db "$db" update-schema -d "$INFERSWEEP_TOOLS/temporal-schema/postgresql/v12/$dir/versioned" \
        >>"$STATE/log/schema.log" 2>&1 || die "temporal-sql-tool update-schema on $db failed (see $STATE/log/schema.log)"
    done )
}

# ------------------------------------------------------------------ Temporal server
datastore() { # name database maxConns: one SQL datastore of the server config, TLS to PostgreSQL
  cat <<EOF
    $1:
      sql:
        pluginName: postgres12
        databaseName: $2
        connectAddr: 127.0.0.1:$PG_PORT
        connectProtocol: tcp
        user: temporal
        password: {{ env "TEMPORAL_PG_PASSWORD" | quote }}
        maxConns: $3
        maxIdleConns: $3
        maxConnLifetime: 1h
        tls:
          enabled: true
          caFile: $STATE/tls/ca.pem
          serverName: localhost
          enableHostVerification: true
EOF
}

write_temporal_config() {
  cat > "$STATE/temporal/config/production.yaml" <<EOF
# enable-template
# generated by infersweep scripts/stack-production.sh; the database password comes from the
# environment (TEMPORAL_PG_PASSWORD), never from this file
log:
  stdout: true
  level: warn
  format: json

persistence:
  defaultStore: postgres-default
  visibilityStore: postgres-visibility
  numHistoryShards: 4
  datastores:
$(datastore postgres-default temporal 20)
$(datastore postgres-visibility temporal_visibility 5)

global:
  membership:
    maxJoinDuration: 30s
    broadcastAddress: 127.0.0.1
  metrics:
    prometheus:
      framework: tally
      timerType: histogram
      listenAddress: 127.0.0.1:$METRICS_PORT
  tls:
    refreshInterval: 1m
    # between the server's services and on the frontend alike: mutual TLS with the cluster's CA
    internode: &mtls
      server:
        certFile: $STATE/tls/server.pem
        keyFile: $STATE/tls/server.key
        requireClientAuth: true
        clientCaFiles: [$STATE/tls/ca.pem]
      client:
        serverName: localhost
        rootCaFiles: [$STATE/tls/ca.pem]
    frontend: *mtls
    systemWorker:
      certFile: $STATE/tls/server.pem
      keyFile: $STATE/tls/server.key
      client:
        serverName: localhost
        rootCaFiles: [$STATE/tls/ca.pem]

services:
  frontend:
    rpc:
      grpcPort: $FRONTEND_PORT
      membershipPort: $((MEMBERSHIP_BASE + 3))
      bindOnIP: 127.0.0.1
      httpPort: $FRONTEND_HTTP_PORT
  history:
    rpc:
      grpcPort: $HISTORY_PORT
      membershipPort: $((MEMBERSHIP_BASE + 4))
      bindOnIP: 127.0.0.1
  matching:
    rpc:
      grpcPort: $MATCHING_PORT
      membershipPort: $((MEMBERSHIP_BASE + 5))
      bindOnIP: 127.0.0.1
  worker:
    rpc:
      grpcPort: $WORKER_PORT
      membershipPort: $((MEMBERSHIP_BASE + 9))
      bindOnIP: 127.0.0.1

clusterMetadata:
  enableGlobalNamespace: false
  failoverVersionIncrement: 10
  masterClusterName: active
  currentClusterName: active
  clusterInformation:
    active:
      enabled: true
      initialFailoverVersion: 1
      rpcName: frontend
      rpcAddress: 127.0.0.1:$FRONTEND_PORT
      httpAddress: 127.0.0.1:$FRONTEND_HTTP_PORT

dcRedirectionPolicy:
  policy: noop

archival:
  history:
    state: disabled
  visibility:
    state: disabled

namespaceDefaults:
  archival:
    history:
      state: disabled
    visibility:
      state: disabled

dynamicConfigClient:
  filepath: $STATE/temporal/config/dynamicconfig.yaml
  pollInterval: 10s
EOF
  cat > "$STATE/temporal/config/dynamicconfig.yaml" <<'EOF'
# generated by infersweep scripts/stack-production.sh (Temporal server dynamic config)
# updates (skipPoint, retryNow, abort) from the CLI and the Web UI
frontend.enableUpdateWorkflowExecution:
  - value: true
frontend.enableUpdateWorkflowExecutionAsyncAccepted:
  - value: true
# a new search attribute is visible at once (else after the cache's refresh)
system.forceSearchAttributesCacheRefreshOnRead:
  - value: true
EOF
}

tctl() { # the Temporal CLI as the `cli` client certificate, over mutual TLS
  "$TOOLS/temporal" --address "127.0.0.1:$FRONTEND_PORT" --tls-ca-path "$STATE/tls/ca.pem" \
    --tls-cert-path "$STATE/tls/clients/cli.pem" --tls-key-path "$STATE/tls/clients/cli.key" \
    --tls-server-name localhost "$@"
}
temporal_healthy() { tctl operator cluster health >/dev/null 2>&1; }

temporal_start() {
  if ! ours "$STATE/pids/temporal-server.pid" temporal-server; then
    write_temporal_config
    TEMPORAL_PG_PASSWORD=$(cat "$STATE/secrets/pg-temporal-password") \
      setsid nohup "$TOOLS/temporal-server" --root "$STATE/temporal" --config config --env production --allow-no-auth start \
      >> "$STATE/log/temporal-server.log" 2>&1 < /dev/null &
    echo $! > "$STATE/pids/temporal-server.pid"
  fi
  wait_for 120 temporal_healthy \
    || die "temporal-server not healthy on 127.0.0.1:$FRONTEND_PORT (see $STATE/log/temporal-server.log)"
}

namespace_up() {
  # the namespace is registered in the frontend's cache shortly after creation: retry describe
  tctl operator namespace describe --namespace "$NAMESPACE" >/dev/null 2>&1 \
    || tctl operator namespace create --namespace "$NAMESPACE" --retention "$RETENTION" \
         --description "infersweep sweeps (scripts/stack-production.sh)" >/dev/null
  ns_visible() { tctl operator namespace describe --namespace "$NAMESPACE" >/dev/null 2>&1; }
  wait_for 60 ns_visible || die "namespace $NAMESPACE not visible after creation"
  # the operator service sees a new namespace once the frontend's namespace cache refreshes (~10 s)
  sa_list() { tctl operator search-attribute list --namespace "$NAMESPACE" 2>/dev/null; }
  wait_for 120 eval 'sa_list >/dev/null' || die "search attributes of namespace $NAMESPACE not readable (see $STATE/log/temporal-server.log)"
  local a
  for a in "${SEARCH_ATTRIBUTES[@]}"; do
    sa_list | grep -qw "$a" || tctl operator search-attribute create --namespace "$NAMESPACE" --name "$a" --type Keyword >/dev/null \
      || die "registering search attribute $a in namespace $NAMESPACE failed"
  done
}

# ------------------------------------------------------------------ Web UI
# The UI server holds the `cli` client certificate and has no login of its own, so whoever reaches
# it acts as the CLI (reads plans, cancels sweeps). It therefore listens on no port of the host: it
# runs in a network namespace of its own (unshare: user + net, no privilege needed) and is reached
# only through the unix socket $UI_SOCKET in a 0700 folder, i.e. by the stack's user. From a
# workstation: `ssh -L $UI_PORT:$UI_SOCKET <host>`, then TEMPORAL_UI_URL (http://127.0.0.1:$UI_PORT)
# works there. Inside the namespace two bridges (scripts/unix-bridge.mjs) carry the UI's HTTP to that
# socket and its gRPC to the frontend (through $SOCKS/frontend.sock, same folder).
SOCKS=$STATE/ui/sock
UI_SOCKET=$SOCKS/ui.sock
# answers through both bridges: the UI server reads the namespace from the frontend
ui_answers() { curl -sf -o /dev/null --max-time 5 --unix-socket "$UI_SOCKET" "http://localhost/api/v1/namespaces/$NAMESPACE"; }

ui_start() {
  ours "$STATE/pids/ui-server.pid" temporal-ui-server && ours "$STATE/pids/ui-bridge.pid" node && return 0
  stop_pid "$STATE/pids/ui-server.pid" temporal-ui-server # its bridges go with it
  unshare -Urn true 2>/dev/null \
    || die "the Web UI needs a private network namespace (unshare -Urn): unprivileged user namespaces are disabled here"
  mkdir -p "$SOCKS" && chmod 700 "$STATE/ui" "$SOCKS"
  stop_pid "$STATE/pids/ui-bridge.pid" node
  setsid nohup node "$ROOT/scripts/unix-bridge.mjs" "unix:$SOCKS/frontend.sock" "tcp:127.0.0.1:$FRONTEND_PORT" \
    >> "$STATE/log/ui-bridge.log" 2>&1 < /dev/null &
  echo $! > "$STATE/pids/ui-bridge.pid"
  wait_for 10 test -S "$SOCKS/frontend.sock" || die "the Web UI's frontend bridge did not start (see $STATE/log/ui-bridge.log)"
  cat > "$STATE/ui/config/production.yaml" <<EOF
# generated by infersweep scripts/stack-production.sh (Temporal UI server, in its own network namespace)
temporalGrpcAddress: 127.0.0.1:$FRONTEND_PORT
host: 127.0.0.1
port: $UI_PORT
enableUi: true
defaultNamespace: $NAMESPACE
showTemporalSystemNamespace: false
notifyOnNewVersion: false
refreshInterval: 1m
cors:
  cookieInsecure: true
  allowOrigins: [http://127.0.0.1:$UI_PORT, http://localhost:$UI_PORT]
tls:
  caFile: $STATE/tls/ca.pem
  certFile: $STATE/tls/clients/cli.pem
  keyFile: $STATE/tls/clients/cli.key
  serverName: localhost
  enableHostVerification: true
auth:
  enabled: false
EOF
  # one process: unshare becomes sh, which starts the two bridges, then becomes the UI server (the pid file's pid)
  # shellcheck disable=SC2016 # expanded by the inner sh
  setsid nohup unshare -Urn sh -c 'ip link set lo up || exit 1
      node "$1" "tcp:127.0.0.1:$2" "unix:$3/frontend.sock" --with-parent &
      node "$1" "unix:$3/ui.sock" "tcp:127.0.0.1:$4" --with-parent &
      exec "$5" --root "$6" --config config --env production start' \
    ui-netns "$ROOT/scripts/unix-bridge.mjs" "$FRONTEND_PORT" "$SOCKS" "$UI_PORT" "$TOOLS/temporal-ui-server" "$STATE/ui" \
    >> "$STATE/log/ui-server.log" 2>&1 < /dev/null &
  echo $! > "$STATE/pids/ui-server.pid"
  wait_for 60 ui_answers || die "Temporal Web UI not answering on $UI_SOCKET (see $STATE/log/ui-server.log)"
}

write_env() {
  # the local stack's values (Slurm, sshd, simulator) plus the production Temporal
  local stack_env=$INFERSWEEP_DATA/stack/env.sh
  {
    [ -s "$stack_env" ] && grep -v 'INFERSWEEP_TEMPORAL_' "$stack_env"
    cat <<EOF
export TEMPORAL_ADDRESS=127.0.0.1:$FRONTEND_PORT
export TEMPORAL_NAMESPACE=$NAMESPACE
export TEMPORAL_TLS=true
export TEMPORAL_TLS_SERVER_CA_CERT_PATH=$STATE/tls/ca.pem
export TEMPORAL_TLS_SERVER_NAME=localhost
export TEMPORAL_TLS_CLIENT_CERT_PATH=$STATE/tls/clients/cli.pem
export TEMPORAL_TLS_CLIENT_KEY_PATH=$STATE/tls/clients/cli.key
export TEMPORAL_UI_URL=http://127.0.0.1:$UI_PORT
export TEMPORAL_UI_SOCKET=$UI_SOCKET
export INFERSWEEP_PRODUCTION=$STATE
export INFERSWEEP_PRODUCTION_PG_PORT=$PG_PORT
EOF
  } > "$STATE/env.sh"
  sed -n 's/^export \([A-Z_]*\)=\(.*\)$/\1=\2/p' "$STATE/env.sh" > "$STATE/env"
}

up() {
  local t0; t0=$(date +%s)
  need_tools
  bash "$ROOT/scripts/stack.sh" up >/dev/null
  secrets_up; tls_up; postgres_up; schema_up; temporal_start; namespace_up; ui_start; write_env
  log "up in $(( $(date +%s) - t0 )) s"
  status
}

down() {
  stop_pid "$STATE/pids/ui-server.pid" temporal-ui-server
  stop_pid "$STATE/pids/ui-bridge.pid" node
  stop_pid "$STATE/pids/temporal-server.pid" temporal-server 30
  postgres_stop
  bash "$ROOT/scripts/stack.sh" down
  log "down"
}

status() {
  local ok=0 s
  row() { printf '%-12s %-40s %s\n' "$1" "$2" "$3"; }
  if pg_ready; then s=up; else s=down; ok=1; fi
  row postgresql "127.0.0.1:$PG_PORT (TLS)" "$s"
  if [ -s "$STATE/tls/ca.pem" ] && temporal_healthy; then s=up; else s=down; ok=1; fi
  row temporal "127.0.0.1:$FRONTEND_PORT (mTLS) ns $NAMESPACE" "$s"
  if ui_answers; then s=up; else s=down; ok=1; fi
  row temporal-ui "$UI_SOCKET (owner only)" "$s"
  bash "$ROOT/scripts/stack.sh" status | grep -v '^temporal' || ok=1
  return $ok
}

case "${1:-status}" in
  up) up ;;
  down) down ;;
  status) status ;;
  env) [ -s "$STATE/env.sh" ] && cat "$STATE/env.sh" || die "production stack not up: run scripts/stack-production.sh up" ;;
  # for the restart tests: the server (all four services) and the database, separately
  stop-temporal) stop_pid "$STATE/pids/temporal-server.pid" temporal-server 30 ;;
  start-temporal) need_tools; temporal_start ;;
  restart-temporal) stop_pid "$STATE/pids/temporal-server.pid" temporal-server 30; need_tools; temporal_start ;;
  stop-postgres) postgres_stop ;;
  start-postgres) need_tools; postgres_start ;;
  restart-postgres) postgres_stop; need_tools; postgres_start ;;
  *) echo "usage: $0 up|down|status|env|restart-temporal|restart-postgres|stop-temporal|start-temporal|stop-postgres|start-postgres" >&2; exit 2 ;;
esac
