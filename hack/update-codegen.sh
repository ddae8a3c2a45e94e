#!/usr/bin/env bash
# Regenerates everything under pkg/generated/ and the zz_generated.* files of
# pkg/apis with k8s.io/code-generator (the version go.mod pins). Generated
# files are never edited by hand: change the types and run this.
set -o errexit -o nounset -o pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "${ROOT}"
MODULE=tenant.io/tenant-apiserver
if [[ -z "${CODEGEN_PKG:-}" ]]; then
  # go list -m names no directory for a module not yet in the module
  # cache (a fresh machine): fetch the pinned version first.
  go mod download k8s.io/code-generator
  CODEGEN_PKG=$(go list -m -f '{{.Dir}}' k8s.io/code-generator)
fi
OUT=${CODEGEN_OUTPUT_ROOT:-${ROOT}}
BOILERPLATE="${ROOT}/hack/boilerplate.go.txt"

# shellcheck source=/dev/null
source "${CODEGEN_PKG}/kube_codegen.sh"

if [[ "${OUT}" != "${ROOT}" ]]; then
  # Verification mode: generate into a copy of the tree.
  mkdir -p "${OUT}"
  tar -C "${ROOT}" --exclude=./_output --exclude=./.git -cf - . | tar -C "${OUT}" -xf -
  cd "${OUT}"
fi

kube::codegen::gen_helpers \
  --boilerplate "${BOILERPLATE}" \
  "$(pwd)/pkg/apis"

mkdir -p "$(pwd)/hack/api-violations"
kube::codegen::gen_openapi \
  --output-dir "$(pwd)/pkg/generated/openapi" \
  --output-pkg "${MODULE}/pkg/generated/openapi" \
  --extra-pkgs k8s.io/apimachinery/pkg/util/intstr \
  --output-model-name-file zz_generated.model_name.go \
  --report-filename "$(pwd)/hack/api-violations/violations.report" \
  --update-report \
  --boilerplate "${BOILERPLATE}" \
  "$(pwd)/pkg/apis"

kube::codegen::gen_client \
  --with-watch \
  --with-applyconfig \
  --output-dir "$(pwd)/pkg/generated" \
  --output-pkg "${MODULE}/pkg/generated" \
  --boilerplate "${BOILERPLATE}" \
  "$(pwd)/pkg/apis"
