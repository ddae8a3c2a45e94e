#!/usr/bin/env bash
# Fails when artifacts/host-crds differs from what hack/update-host-crds.sh
# generates from the pins in the hack/tools modules (crds, openshift,
# gatewayapi, certmanager, monitoring).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TMP_DIR=$(mktemp -d)
trap 'rm -rf "${TMP_DIR}"' EXIT

"${ROOT}/hack/update-host-crds.sh" "${TMP_DIR}" >/dev/null

# The subdirectories of CRDs that stacks do not install (see update-host-crds.sh).
SUBDIRS=(cert-manager monitoring)
mkdir -p "${TMP_DIR}/current" "${TMP_DIR}/expected"
find "${ROOT}/artifacts/host-crds" -maxdepth 1 -name '*.yaml' -exec cp {} "${TMP_DIR}/current/" \;
mv "${TMP_DIR}"/*.yaml "${TMP_DIR}/expected/"
for sub in "${SUBDIRS[@]}"; do
  mkdir -p "${TMP_DIR}/current/${sub}"
  find "${ROOT}/artifacts/host-crds/${sub}" -maxdepth 1 -name '*.yaml' -exec cp {} "${TMP_DIR}/current/${sub}/" \;
  mv "${TMP_DIR}/${sub}" "${TMP_DIR}/expected/"
done

if ! (cd "${TMP_DIR}" && diff -ru current expected); then
  echo "artifacts/host-crds is stale: run hack/update-host-crds.sh" >&2
  exit 1
fi
echo "artifacts/host-crds is up to date"
