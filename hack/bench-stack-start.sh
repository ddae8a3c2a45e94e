#!/usr/bin/env bash
# Times `make run` from start to its READY line twice in one run, in a fresh
# clone of this repository: cold (empty _output and an empty Go build cache,
# so every binary is compiled; the Go module cache stays warm, since download
# times measure the network, not us) and cached (everything built).
# Usage: hack/bench-stack-start.sh   (takes about 10 minutes on 2 cores)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TMP=$(mktemp -d)
trap 'rm -rf "${TMP}"' EXIT
git clone -q "${ROOT}" "${TMP}/repo"
export GOCACHE="${TMP}/gocache"

# run_until_ready prints the seconds from start to the READY line, then stops the stack.
run_until_ready() {
  local log=$1 start pid
  start=$(date +%s.%N)
  (cd "${TMP}/repo" && exec make run) >"${log}" 2>&1 &
  pid=$!
  while ! grep -q READY "${log}"; do
    if ! kill -0 "${pid}" 2>/dev/null; then
      echo "make run exited before READY:" >&2
      tail -n 30 "${log}" >&2
      exit 1
    fi
    sleep 0.2
  done
  awk -v a="$(date +%s.%N)" -v b="${start}" 'BEGIN { print a - b }'
  pkill -TERM -P "${pid}" || true
  wait "${pid}" || true
}

cold=$(run_until_ready "${TMP}/cold.log")
cached=$(run_until_ready "${TMP}/cached.log")
awk -v c="${cold}" -v w="${cached}" 'BEGIN {
  printf "cold start to READY:   %.1f s\ncached start to READY: %.1f s\nratio cold/cached:     %.1f\n", c, w, c / w }'
