#!/usr/bin/env bash
# One-shot, idempotent set-up on a fresh Debian machine (run as root):
#   Debian packages (Slurm, munge, sshd, squashfs-tools, chromium), npm packages,
#   the Temporal CLI and llm-d-inference-sim built from their Go modules, and the
#   aiperf peer in its own venv, the vLLM CPU engine (scripts/setup-vllm.sh). Re-running it only
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

# ---- npm packages (node >= 20.19)
node -e 'const [a,b]=process.versions.node.split(".").map(Number); process.exit(a>20||(a===20&&b>=19)?0:1)' \
  || fail "Node $(node --version) is too old: infersweep needs Node >= 20.19"
if [ ! -d node_modules/@temporalio/worker ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  step "npm ci"
  npm ci --no-audit --no-fund >/dev/null || fail "npm ci (see npm's output above)"
fi

# ---- Go binaries into the git-ignored tools folder
mkdir -p "$INFERSWEEP_TOOLS/bin"
command -v go >/dev/null || fail "Go is not installed (needed to build the Temporal CLI and the simulator)"
if [ ! -x "$INFERSWEEP_TOOLS/bin/temporal" ]; then
  step "go install temporal CLI $TEMPORAL_CLI_VERSION (a few minutes on 2 cores)"
  GOBIN="$INFERSWEEP_TOOLS/bin" go install "github.com/temporalio/cli/cmd/temporal@$TEMPORAL_CLI_VERSION" \
    || fail "go install github.com/temporalio/cli/cmd/temporal@$TEMPORAL_CLI_VERSION"
fi
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

# ---- a small local Hugging Face tokenizer for aiperf (it must load one even with server token
# counts; no hub is reachable): the test tokenizer that the llm-d-kv-cache Go module ships
if [ ! -s "$INFERSWEEP_TOOLS/tokenizer/tokenizer.json" ]; then
  step "aiperf's offline tokenizer from github.com/llm-d/llm-d-kv-cache@$KV_CACHE_VERSION (Go module)"
  dir=$(go mod download -json "github.com/llm-d/llm-d-kv-cache@$KV_CACHE_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  [ -n "$dir" ] && [ -s "$dir/pkg/tokenization/testdata/test-model/tokenizer.json" ] \
    || fail "go mod download github.com/llm-d/llm-d-kv-cache@$KV_CACHE_VERSION did not bring its test tokenizer"
  mkdir -p "$INFERSWEEP_TOOLS/tokenizer"
  cp "$dir"/pkg/tokenization/testdata/test-model/* "$INFERSWEEP_TOOLS/tokenizer/"
  chmod u+w "$INFERSWEEP_TOOLS"/tokenizer/*
fi

# ---- aiperf peer (benchmarks and the InferenceX adapter), its own venv
if [ ! -x "$INFERSWEEP_TOOLS/aiperf-venv/bin/aiperf" ]; then
  step "pip install aiperf into $INFERSWEEP_TOOLS/aiperf-venv"
  python3 -m venv "$INFERSWEEP_TOOLS/aiperf-venv" || fail "python3 -m venv"
  "$INFERSWEEP_TOOLS/aiperf-venv/bin/pip" install -q "aiperf${AIPERF_VERSION:+==$AIPERF_VERSION}" || fail "pip install aiperf"
fi

# ---- the real vLLM CPU engine, its plugin and tiny models for the local-vllm profile (own script)
bash "$ROOT/scripts/setup-vllm.sh" || fail "the vLLM CPU engine (scripts/setup-vllm.sh, the step it names above)"

# ---- the production-shaped Temporal (PostgreSQL, temporal-server, Web UI server): scripts/stack-production.sh
bash "$ROOT/scripts/setup-production.sh" || fail "scripts/setup-production.sh"

step "done in $(( $(date +%s) - t0 )) s: temporal $("$INFERSWEEP_TOOLS/bin/temporal" --version | head -n1 | sed 's/.*(//;s/)//'), simulator $SIM_VERSION, aiperf $("$INFERSWEEP_TOOLS/aiperf-venv/bin/pip" show aiperf 2>/dev/null | sed -n 's/^Version: //p')"
