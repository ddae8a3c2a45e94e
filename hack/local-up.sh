#!/usr/bin/env bash
# Runs the whole stack locally on loopback ports (what `make run` does):
# builds the tools once (cached in _output/bin), then runs hack/localup in the
# foreground. It prints a line with READY when the tenant.io API answers
# through kube-apiserver; Ctrl-C stops everything it started.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "${ROOT}"

bash hack/build-tools.sh stack
# The provider's gateway only when asked for (-gateway): Traefik takes
# minutes to build the first time.
for arg in "$@"; do
  case "${arg}" in -gateway|--gateway) bash hack/build-tools.sh traefik ;; esac
done
# build NAME PACKAGE: a Go binary into _output/bin, saying how long it took.
build() {
  local start=$(date +%s)
  echo "building $1 ..."
  go build -o "_output/bin/$1" "$2"
  echo "built $1 in $(( $(date +%s) - start ))s"
}
build localup ./hack/localup
# The kubectl plugin, for the README's walkthrough (PATH=_output/bin:$PATH).
build kubectl-tenant ./cmd/kubectl-tenant
# The web console (the stack runs it; this shows its build time).
build tenant-console ./cmd/tenant-console
cp cmd/kubectl-tenant/kubectl_complete-tenant _output/bin/
# exec: signals reach localup itself, which stops its processes.
exec _output/bin/localup "$@"
