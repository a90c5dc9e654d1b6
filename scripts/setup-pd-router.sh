#!/usr/bin/env bash
# The P/D router of the local stack (called by scripts/setup.sh; idempotent: a re-run only checks):
# llm-d's P/D sidecar, `pd-sidecar` of github.com/llm-d/llm-d-inference-scheduler at $PD_SIDECAR_VERSION (the
# successor of github.com/llm-d/llm-d-routing-sidecar, which the Go module proxy does not serve), built from the Go
# module proxy into $INFERSWEEP_TOOLS/bin/pd-sidecar. The marker: $INFERSWEEP_TOOLS/bin/pd-sidecar.version holding
# the version it was built from (~21 min on 2 busy cores: k8s client-go and controller-runtime compile).
#
# What infersweep relies on (sources of github.com/llm-d/llm-d-inference-scheduler v0.7.1):
#   - pkg/sidecar/proxy/options.go: `--port` (where it listens), `--vllm-port` (the decode server it fronts,
#     always `localhost`: the sidecar runs on the decode worker's node), `--kv-connector nixlv2`,
#     `--secure-proxy=false` (the default true serves TLS with a self-signed certificate),
#     `--enable-prefiller-sampling` (a random prefiller among those the header lists, else the first);
#   - pkg/common/common.go and pkg/sidecar/proxy/chat_completions.go: a request carrying the header
#     `x-prefiller-host-port: HOST:PORT[,HOST:PORT…]` is disaggregated; without it the sidecar sends the request
#     straight to its decode server ("skip disaggregated prefill", reason no_prefill_header);
#   - pkg/sidecar/proxy/connector_nixlv2.go: the sidecar sends the prefill request itself, to the prefiller, with
#     `kv_transfer_params {do_remote_decode: true}`, `stream: false`, `max_tokens` and `max_completion_tokens` 1;
#     then the original request to its decode server with the prefiller's returned `kv_transfer_params`;
#   - pkg/telemetry/tracing.go: OpenTelemetry tracing is always on (OTLP at localhost:4317); the sampling ratio
#     `OTEL_TRACES_SAMPLER_ARG=0` keeps it from exporting anything.
# The simulator (github.com/llm-d/llm-d-inference-sim v0.10.2) answers a `do_remote_decode` request with finish
# reason `remote_decode` (pkg/llm-d-inference-sim/request.go, pkg/common/config.go) and counts it in
# `vllm:request_success_total{finish_reason="remote_decode"}` (pkg/llm-d-inference-sim/metrics.go; no `engine`
# label); a `do_remote_prefill` request skips its prefill time and pays `--kv-cache-transfer-latency` instead
# (pkg/llm-d-inference-sim/latencies.go).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=scripts/lib.sh
. "$ROOT/scripts/lib.sh"
step() { echo "[setup-pd-router $(date +%T)] $*"; }
fail() { echo "[setup-pd-router] FAILED: $*" >&2; exit 1; }

bin=$INFERSWEEP_TOOLS/bin/pd-sidecar
if [ -x "$bin" ] && [ "$(cat "$bin.version" 2>/dev/null)" = "$PD_SIDECAR_VERSION" ]; then exit 0; fi
mkdir -p "$INFERSWEEP_TOOLS/bin"
t0=$(date +%s)
# a throwaway module requiring the exact version (the proxy refuses the module-list lookup `go install` makes)
step "build pd-sidecar of llm-d-inference-scheduler $PD_SIDECAR_VERSION (minutes on 2 cores)"
b=$(mktemp -d)
trap 'rm -rf "$b"' EXIT
( cd "$b" && go mod init infersweep-pd-router-build >/dev/null 2>&1 \
  && GOFLAGS=-mod=mod go get "github.com/llm-d/llm-d-inference-scheduler@$PD_SIDECAR_VERSION" \
  && CGO_ENABLED=0 GOFLAGS=-mod=mod go build -o "$bin" github.com/llm-d/llm-d-inference-scheduler/cmd/pd-sidecar ) \
  || fail "building github.com/llm-d/llm-d-inference-scheduler/cmd/pd-sidecar@$PD_SIDECAR_VERSION"
echo "$PD_SIDECAR_VERSION" > "$bin.version"
step "done in $(( $(date +%s) - t0 )) s"
