#!/usr/bin/env bash
# Fails when the generated code in the tree differs from what
# hack/update-codegen.sh produces from the current types.
set -o errexit -o nounset -o pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TMP=$(mktemp -d)
trap 'rm -rf "${TMP}"' EXIT

CODEGEN_OUTPUT_ROOT="${TMP}/tree" "${ROOT}/hack/update-codegen.sh" >/dev/null

status=0
for path in pkg/generated pkg/apis hack/api-violations; do
  if ! diff -Nru "${ROOT}/${path}" "${TMP}/tree/${path}" >"${TMP}/diff" 2>&1; then
    echo "generated code under ${path} is stale; run hack/update-codegen.sh" >&2
    head -n 40 "${TMP}/diff" >&2
    status=1
  fi
done
[[ ${status} -eq 0 ]] && echo "generated code is up to date"
exit ${status}
