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

# ---- three independent branches at once, each logging to $INFERSWEEP_TOOLS/setup-logs/<branch>.log (and to this
# output, prefixed): the Go builds load both cores, the Python venvs and npm mostly wait on downloads and disk.
# One after the other a cold machine took ~19 min (docs/measurements.md "Set-up").
node -e 'const [a,b]=process.versions.node.split(".").map(Number); process.exit(a>20||(a===20&&b>=19)?0:1)' \
  || fail "Node $(node --version) is too old: infersweep needs Node >= 20.19"
command -v go >/dev/null || fail "Go is not installed (needed to build the Temporal CLI, the simulator and the server)"
mkdir -p "$INFERSWEEP_TOOLS/bin" "$INFERSWEEP_TOOLS/setup-logs"

npm_branch() { # name function: runs it in the background, its output to its log and (prefixed) here
  local log=$INFERSWEEP_TOOLS/setup-logs/$1.log
  ( set -o pipefail; "$2" 2>&1 | tee "$log" | sed -u "s/^/[$1] /" ) &
  pids+=($!)
  names+=("$1")
}
pids=()
names=()
branch npm npm_branch
branch python python_branch
branch go go_branch
failed=()
for k in "${!pids[@]}"; do wait "${pids[$k]}" || failed+=("${names[$k]}"); done
if [ ${#failed[@]} -gt 0 ]; then
  for n in "${failed[@]}"; do
    echo "[setup] the $n branch failed; the end of $INFERSWEEP_TOOLS/setup-logs/$n.log:" >&2
    tail -n 25 "$INFERSWEEP_TOOLS/setup-logs/$n.log" >&2
  done
  fail "${failed[*]} (see above)"
fi

step "done in $(( $(date +%s) - t0 )) s: temporal $("$INFERSWEEP_TOOLS/bin/temporal" --version | head -n1 | sed 's/.*(//;s/)//'), simulator $SIM_VERSION, aiperf $("$INFERSWEEP_TOOLS/aiperf-venv/bin/python" -c 'import importlib.metadata as m; print(m.version("aiperf"))' 2>/dev/null)"
