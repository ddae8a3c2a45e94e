#!/usr/bin/env bash
# Runs the whole stack locally on loopback ports (what `make run` does):
# builds the tools once (cached in _output/bin), then runs hack/localup in the
# foreground. It prints a line with READY when the tenant.io API answers
# through kube-apiserver; Ctrl-C stops everything it started.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "${ROOT}"

bash hack/build-tools.sh stack
go build -o _output/bin/localup ./hack/localup
# exec: signals reach localup itself, which stops its processes.
exec _output/bin/localup "$@"
