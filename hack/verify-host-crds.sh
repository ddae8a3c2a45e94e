#!/usr/bin/env bash
# Fails when artifacts/host-crds differs from what hack/update-host-crds.sh
# generates from the pins in hack/tools/crds/go.mod.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TMP_DIR=$(mktemp -d)
trap 'rm -rf "${TMP_DIR}"' EXIT

"${ROOT}/hack/update-host-crds.sh" "${TMP_DIR}" >/dev/null

mkdir -p "${TMP_DIR}/current/cert-manager"
find "${ROOT}/artifacts/host-crds" -maxdepth 1 -name '*.yaml' -exec cp {} "${TMP_DIR}/current/" \;
find "${ROOT}/artifacts/host-crds/cert-manager" -maxdepth 1 -name '*.yaml' -exec cp {} "${TMP_DIR}/current/cert-manager/" \;
mkdir -p "${TMP_DIR}/expected"
mv "${TMP_DIR}"/*.yaml "${TMP_DIR}/cert-manager" "${TMP_DIR}/expected/"

if ! (cd "${TMP_DIR}" && diff -ru current expected); then
  echo "artifacts/host-crds is stale: run hack/update-host-crds.sh" >&2
  exit 1
fi
echo "artifacts/host-crds is up to date"
