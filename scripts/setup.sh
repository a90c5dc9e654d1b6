#!/usr/bin/env bash
# One-shot, idempotent set-up on a fresh Debian machine (run as root):
#   Debian packages (Slurm, munge, sshd, squashfs-tools, chromium), npm packages,
#   the Temporal CLI, llm-d-inference-sim and llm-d's P/D sidecar built from their Go modules, and the
#   aiperf peer and Apache Otava in their own venvs, the vLLM CPU engine (scripts/setup-vllm.sh). Re-running it only
#   checks what is there.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$ROOT/scripts/lib.sh"
cd "$ROOT"
t0=$(date +%s)
step() { echo "[setup $(date +%T)] $*"; }
fail() { echo "[setup] FAILED: $*" >&2; exit 1; }

# ---- Debian packages (scripts/apt-safe.sh: no system service is started or enabled)
. "$ROOT/scripts/apt-safe.sh"
apt_safe_install "${APT_PACKAGES[@]}" || fail "apt-get install ${APT_PACKAGES[*]} (see above)"
bash "$ROOT/scripts/setup-sites.sh" || fail "scripts/setup-sites.sh"

# ---- independent branches at once, each logging to $INFERSWEEP_TOOLS/setup-logs/<branch>.log (and to this
# output, prefixed): the Go builds load both cores; npm and the Python venvs mostly wait on downloads and disk.
# One after the other a cold machine took ~19 min (docs/measurements.md, "Dated measurements").
node -e 'const [a,b]=process.versions.node.split(".").map(Number); process.exit(a>20||(a===20&&b>=19)?0:1)' \
  || fail "Node $(node --version) is too old: infersweep needs Node >= 20.19"
command -v go >/dev/null || fail "Go is not installed (needed to build the Temporal CLI, the simulator and the server)"
mkdir -p "$INFERSWEEP_TOOLS/bin" "$INFERSWEEP_TOOLS/setup-logs"

npm_branch() {
  if [ ! -d node_modules/@temporalio/worker ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
    step "npm ci"
    npm ci --no-audit --no-fund >/dev/null || fail "npm ci (see npm's output above)"
  fi
}

go_branch() { # the Go binaries into the git-ignored tools folder, then the production-shaped stack's
  if [ ! -x "$INFERSWEEP_TOOLS/bin/temporal" ]; then
    step "go install temporal CLI $TEMPORAL_CLI_VERSION (~3 min on 2 idle cores)"
    GOBIN="$INFERSWEEP_TOOLS/bin" go install "github.com/temporalio/cli/cmd/temporal@$TEMPORAL_CLI_VERSION" \
      || fail "go install github.com/temporalio/cli/cmd/temporal@$TEMPORAL_CLI_VERSION"
  fi
  # temporal-server, its SQL tool and the UI server reuse the CLI's compiled packages (scripts/setup-production.sh)
  bash "$ROOT/scripts/setup-production.sh" || fail "scripts/setup-production.sh"
  if [ ! -x "$INFERSWEEP_TOOLS/bin/llm-d-inference-sim" ]; then
    # `go install …@v0.10.2` fails here on the proxy's module-list lookup it makes for
    # deprecation notices; building from a throwaway module that requires the exact
    # version uses the same sources and checksums.
    step "build llm-d-inference-sim $SIM_VERSION (a few minutes on 2 cores)"
    b=$(mktemp -d)
    ( cd "$b" && go mod init infersweep-sim-build >/dev/null 2>&1 \
      && GOFLAGS=-mod=mod go get "github.com/llm-d/llm-d-inference-sim@$SIM_VERSION" \
      && CGO_ENABLED=0 GOFLAGS=-mod=mod go build -o "$INFERSWEEP_TOOLS/bin/llm-d-inference-sim" \
           github.com/llm-d/llm-d-inference-sim/cmd/llm-d-inference-sim ) \
      || fail "building github.com/llm-d/llm-d-inference-sim@$SIM_VERSION"
    rm -rf "$b"
  fi
  # llm-d's P/D sidecar, the local stack's P/D router (marker: bin/pd-sidecar.version)
  bash "$ROOT/scripts/setup-pd-router.sh" || fail "scripts/setup-pd-router.sh"
  # a small local Hugging Face tokenizer for aiperf (it must load one even with server token counts; no hub is
  # reachable): the test tokenizer that the llm-d-kv-cache Go module ships
  if [ ! -s "$INFERSWEEP_TOOLS/tokenizer/tokenizer.json" ]; then
    step "aiperf's offline tokenizer from github.com/llm-d/llm-d-kv-cache@$KV_CACHE_VERSION (Go module)"
    dir=$(go mod download -json "github.com/llm-d/llm-d-kv-cache@$KV_CACHE_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
    [ -n "$dir" ] && [ -s "$dir/pkg/tokenization/testdata/test-model/tokenizer.json" ] \
      || fail "go mod download github.com/llm-d/llm-d-kv-cache@$KV_CACHE_VERSION did not bring its test tokenizer"
    mkdir -p "$INFERSWEEP_TOOLS/tokenizer"
    cp "$dir"/pkg/tokenization/testdata/test-model/* "$INFERSWEEP_TOOLS/tokenizer/"
    chmod u+w "$INFERSWEEP_TOOLS"/tokenizer/*
  fi
}

vllm_branch() { # the real vLLM CPU engine and its plugin, beside `npm ci` (its tiny models need tsx: after the branches)
  bash "$ROOT/scripts/setup-vllm.sh" --engine-only \
    || fail "the vLLM CPU engine (scripts/setup-vllm.sh, the step it names above)"
}

aiperf_branch() { # the aiperf peer (benchmarks and the InferenceX adapter) in its own venv, by the uv installed before
  # the branches (pip when INFERSWEEP_VLLM=0 skipped uv); beside the vLLM venv, not after it (~30 s warm)
  local venv=$INFERSWEEP_TOOLS/aiperf-venv
  [ ! -x "$venv/bin/aiperf" ] || return 0
  local uv=$INFERSWEEP_TOOLS/uv-venv/bin/uv
  rm -rf "$venv"
  if [ -x "$uv" ]; then
    step "aiperf $AIPERF_VERSION into $venv (uv)"
    python3 -m venv --without-pip "$venv" || fail "python3 -m venv $venv"
    UV_CACHE_DIR=${UV_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/uv} SSL_CERT_FILE=${SSL_CERT_FILE:-/etc/ssl/certs/ca-certificates.crt} \
      UV_NO_PROGRESS=1 "$uv" pip install --python "$venv/bin/python" --compile-bytecode "aiperf==$AIPERF_VERSION" \
      || fail "uv pip install aiperf==$AIPERF_VERSION"
  else
    step "aiperf $AIPERF_VERSION into $venv (pip)"
    python3 -m venv "$venv" || fail "python3 -m venv $venv"
    "$venv/bin/pip" install -q "aiperf==$AIPERF_VERSION" || fail "pip install aiperf==$AIPERF_VERSION"
  fi
  [ -x "$venv/bin/aiperf" ] || fail "aiperf $AIPERF_VERSION installed no $venv/bin/aiperf"
}

otava_branch() { # Apache Otava, the change-point referee of libs/history/test/otava-referee.test.ts (~20 s cold)
  bash "$ROOT/scripts/setup-otava.sh" || fail "scripts/setup-otava.sh (apache-otava into $INFERSWEEP_TOOLS/otava-venv)"
}

branch() { # name function: runs it in the background, its output to its log and (prefixed) here
  local log=$INFERSWEEP_TOOLS/setup-logs/$1.log
  ( set -o pipefail; "$2" 2>&1 | tee "$log" | sed -u "s/^/[$1] /" ) &
  pids+=($!)
  names+=("$1")
}
pids=()
names=()
# uv first (seconds; skipped when there): the vLLM and aiperf venvs both use it
bash "$ROOT/scripts/setup-vllm.sh" --uv-only || fail "uv (scripts/setup-vllm.sh --uv-only)"
branch node npm_branch
branch vllm vllm_branch
branch go go_branch
branch aiperf aiperf_branch
branch otava otava_branch
failed=()
for k in "${!pids[@]}"; do wait "${pids[$k]}" || failed+=("${names[$k]}"); done
if [ ${#failed[@]} -gt 0 ]; then
  for n in "${failed[@]}"; do
    echo "[setup] the $n branch failed; the end of $INFERSWEEP_TOOLS/setup-logs/$n.log:" >&2
    tail -n 25 "$INFERSWEEP_TOOLS/setup-logs/$n.log" >&2
  done
  fail "${failed[*]} (see above)"
fi
# the tiny models of scripts/setup-vllm.sh (step 5 runs tsx from node_modules; the engine's steps are done: skipped)
bash "$ROOT/scripts/setup-vllm.sh" || fail "the vLLM CPU engine's models (scripts/setup-vllm.sh, the step it names above)"

# ---- the repository's git hooks (.githooks: the commit-message check), in a git checkout only; idempotent
if git -C "$ROOT" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  git -C "$ROOT" config core.hooksPath .githooks
fi

step "done in $(( $(date +%s) - t0 )) s: temporal $("$INFERSWEEP_TOOLS/bin/temporal" --version | head -n1 | sed 's/.*(//;s/)//'), simulator $SIM_VERSION, aiperf $("$INFERSWEEP_TOOLS/aiperf-venv/bin/python" -c 'import importlib.metadata as m; print(m.version("aiperf"))' 2>/dev/null)"
