#!/usr/bin/env bash
# Set-up for the production-shaped Temporal of scripts/stack-production.sh (docs/deploy.md),
# called by scripts/setup.sh; idempotent (a re-run only checks):
#   - Debian's PostgreSQL, installed with starting services forbidden (policy-rc.d exit 101): the
#     stack runs its own pg_ctl cluster on loopback, never the system service;
#   - temporal-server and temporal-sql-tool built from go.temporal.io/server at the version the
#     Temporal CLI embeds (CLI v1.5.1 -> server v1.29.1);
#   - temporal-ui-server built from github.com/temporalio/ui-server/v2 at the version the CLI embeds
#     (v2.42.1; the compiled Web UI is embedded in the module).
# The three are built in one throwaway module that requires the Temporal CLI at its pinned version (and the server
# and UI server at the versions the CLI's go.mod pins), with the CLI's own build settings (cgo as `go env` says, no
# build tags): `go` then selects exactly the CLI's dependency versions, and every package the CLI build compiled
# comes from Go's build cache. Measured on this machine (2 cores, empty build cache, 2026-12-04): the CLI 162 s, then
# temporal-server 5 s and temporal-sql-tool 3 s; built on their own (the server's go.mod versions, CGO_ENABLED=0,
# -tags disable_grpc_modules, as before) the server recompiled the shared tree.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=scripts/lib.sh
. "$ROOT/scripts/lib.sh"
t0=$(date +%s)
step() { echo "[setup-production $(date +%T)] $*"; }
fail() { echo "[setup-production] FAILED: $*" >&2; exit 1; }

TEMPORAL_SERVER_VERSION=v1.29.1
TEMPORAL_UI_SERVER_VERSION=v2.42.1
PG_PACKAGES=(postgresql postgresql-client openssl)

# ---- Debian's PostgreSQL, its system service never started
missing=()
for p in "${PG_PACKAGES[@]}"; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  [ "$(id -u)" = 0 ] || fail "Debian packages ${missing[*]} are missing and installing them needs root"
  step "apt-get install ${missing[*]} (services not started)"
  own_policy=
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\n# infersweep scripts/setup-production.sh: no service starts during this install\nexit 101\n' > /usr/sbin/policy-rc.d
    chmod 755 /usr/sbin/policy-rc.d
    own_policy=1
  fi
  rc=0
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; } || rc=$?
  [ -z "$own_policy" ] || rm -f /usr/sbin/policy-rc.d
  [ $rc = 0 ] || fail "apt-get install ${missing[*]}"
fi
ls -d /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1 || fail "no pg_ctl under /usr/lib/postgresql/*/bin after installing postgresql"

# ---- Go binaries
mkdir -p "$INFERSWEEP_TOOLS/bin"
command -v go >/dev/null || fail "Go is not installed (needed to build the Temporal server)"
build_go() { # output-name package: in a module that requires the CLI (see the header)
  local out=$1 pkg=$2 b
  b=$(mktemp -d)
  ( cd "$b" && go mod init "infersweep-$out-build" >/dev/null 2>&1 \
    && GOFLAGS=-mod=mod go get "github.com/temporalio/cli@$TEMPORAL_CLI_VERSION" \
         "go.temporal.io/server@$TEMPORAL_SERVER_VERSION" "github.com/temporalio/ui-server/v2@$TEMPORAL_UI_SERVER_VERSION" \
    && { grep -q "go.temporal.io/server $TEMPORAL_SERVER_VERSION" go.mod \
           && grep -q "github.com/temporalio/ui-server/v2 $TEMPORAL_UI_SERVER_VERSION" go.mod \
           || { echo "the CLI $TEMPORAL_CLI_VERSION pins other server/UI versions than $TEMPORAL_SERVER_VERSION/$TEMPORAL_UI_SERVER_VERSION: update scripts/setup-production.sh" >&2; false; }; } \
    && GOFLAGS=-mod=mod nice go build -ldflags '-s -w' -o "$INFERSWEEP_TOOLS/bin/$out" "$pkg" ) || { rm -rf "$b"; return 1; }
  rm -rf "$b"
}
stamp() { [ "$(cat "$INFERSWEEP_TOOLS/bin/$1.version" 2>/dev/null)" = "$2" ] && [ -x "$INFERSWEEP_TOOLS/bin/$1" ]; }
if ! stamp temporal-server "$TEMPORAL_SERVER_VERSION" || ! stamp temporal-sql-tool "$TEMPORAL_SERVER_VERSION"; then
  step "build temporal-server + temporal-sql-tool $TEMPORAL_SERVER_VERSION (seconds after the CLI's build, minutes without it)"
  build_go temporal-server go.temporal.io/server/cmd/server \
    || fail "building go.temporal.io/server/cmd/server@$TEMPORAL_SERVER_VERSION"
  build_go temporal-sql-tool go.temporal.io/server/cmd/tools/sql \
    || fail "building go.temporal.io/server/cmd/tools/sql@$TEMPORAL_SERVER_VERSION"
  echo "$TEMPORAL_SERVER_VERSION" > "$INFERSWEEP_TOOLS/bin/temporal-server.version"
  echo "$TEMPORAL_SERVER_VERSION" > "$INFERSWEEP_TOOLS/bin/temporal-sql-tool.version"
fi
if ! stamp temporal-ui-server "$TEMPORAL_UI_SERVER_VERSION"; then
  step "build temporal-ui-server $TEMPORAL_UI_SERVER_VERSION"
  build_go temporal-ui-server github.com/temporalio/ui-server/v2/cmd/server \
    || fail "building github.com/temporalio/ui-server/v2/cmd/server@$TEMPORAL_UI_SERVER_VERSION"
  echo "$TEMPORAL_UI_SERVER_VERSION" > "$INFERSWEEP_TOOLS/bin/temporal-ui-server.version"
fi
# the schema files temporal-sql-tool applies ship in the server module, not in the binary
if [ "$(cat "$INFERSWEEP_TOOLS/temporal-schema/VERSION" 2>/dev/null)" != "$TEMPORAL_SERVER_VERSION" ]; then
  step "PostgreSQL schema files of go.temporal.io/server@$TEMPORAL_SERVER_VERSION"
  dir=$(cd /tmp && go mod download -json "go.temporal.io/server@$TEMPORAL_SERVER_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  [ -n "$dir" ] && [ -d "$dir/schema/postgresql/v12" ] \
    || fail "go mod download go.temporal.io/server@$TEMPORAL_SERVER_VERSION did not bring schema/postgresql/v12"
  rm -rf "$INFERSWEEP_TOOLS/temporal-schema"
  mkdir -p "$INFERSWEEP_TOOLS/temporal-schema"
  cp -r "$dir/schema/postgresql" "$INFERSWEEP_TOOLS/temporal-schema/"
  chmod -R u+w "$INFERSWEEP_TOOLS/temporal-schema"
  echo "$TEMPORAL_SERVER_VERSION" > "$INFERSWEEP_TOOLS/temporal-schema/VERSION"
fi

step "done in $(( $(date +%s) - t0 )) s: temporal-server $TEMPORAL_SERVER_VERSION, ui-server $TEMPORAL_UI_SERVER_VERSION, PostgreSQL $(ls /usr/lib/postgresql | sort -n | tail -n1)"
