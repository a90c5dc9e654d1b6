#!/usr/bin/env bash
# Apache Otava (PyPI apache-otava) in its own venv, $INFERSWEEP_TOOLS/otava-venv: the referee the
# change-point tests run beside libs/stats eDivisive (libs/history/test/otava-referee.test.ts).
# Idempotent: a venv whose python imports otava at the pinned version is kept (~20 s cold with uv).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$ROOT/scripts/lib.sh"
OTAVA_VERSION=${OTAVA_VERSION:-0.8.0}
venv=$INFERSWEEP_TOOLS/otava-venv
marker=$venv/.infersweep-otava-$OTAVA_VERSION
[ -f "$marker" ] && exit 0
echo "[setup $(date +%T)] apache-otava $OTAVA_VERSION into $venv"
rm -rf "$venv"
uv=$INFERSWEEP_TOOLS/uv-venv/bin/uv
if [ -x "$uv" ]; then
  python3 -m venv --without-pip "$venv"
  UV_CACHE_DIR=${UV_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/uv} SSL_CERT_FILE=${SSL_CERT_FILE:-/etc/ssl/certs/ca-certificates.crt} \
    UV_NO_PROGRESS=1 "$uv" pip install --python "$venv/bin/python" "apache-otava==$OTAVA_VERSION"
else
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q "apache-otava==$OTAVA_VERSION"
fi
"$venv/bin/python" -c 'import otava.analysis' || { echo "[setup] apache-otava $OTAVA_VERSION: otava.analysis does not import" >&2; exit 1; }
touch "$marker"
