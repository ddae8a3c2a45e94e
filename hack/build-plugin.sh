#!/usr/bin/env bash
# Builds the kubectl plugin (what `make plugin` does): kubectl-tenant and its
# completion helper kubectl_complete-tenant into _output/bin, and for krew an
# archive per platform and the manifest that names them into _output/plugin.
#
#   hack/build-plugin.sh                      the machine's own platform
#   PLATFORMS="linux/amd64 darwin/arm64" hack/build-plugin.sh
#   VERSION=v0.2.0 hack/build-plugin.sh       the version krew reports
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "${ROOT}"

VERSION="${VERSION:-v0.1.0}"
PLATFORMS="${PLATFORMS:-$(go env GOOS)/$(go env GOARCH)}"
OUT=_output/plugin
mkdir -p _output/bin "${OUT}"

HOST="$(go env GOOS)/$(go env GOARCH)"

# build_release OS ARCH OUT: a static, stripped binary.
build_release() {
  GOOS="$1" GOARCH="$2" CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$3" ./cmd/kubectl-tenant
}

start=$(date +%s)
echo "building kubectl-tenant (${HOST}) into _output/bin ..."
build_release "${HOST%/*}" "${HOST#*/}" _output/bin/kubectl-tenant
cp cmd/kubectl-tenant/kubectl_complete-tenant _output/bin/
echo "built kubectl-tenant in $(( $(date +%s) - start ))s"

# The krew manifest: the template's platforms list replaced by the archives
# built here, each with its sha256.
manifest="${OUT}/tenant.yaml"
sed -e "s/^  version: .*/  version: ${VERSION}/" -e '/^  platforms:/,$d' artifacts/krew/tenant.yaml > "${manifest}"
echo "  platforms:" >> "${manifest}"
for platform in ${PLATFORMS}; do
  os="${platform%/*}" arch="${platform#*/}"
  start=$(date +%s)
  stage="$(mktemp -d)"
  if [[ "${platform}" == "${HOST}" ]]; then
    cp _output/bin/kubectl-tenant "${stage}/"
  else
    build_release "${os}" "${arch}" "${stage}/kubectl-tenant"
  fi
  cp cmd/kubectl-tenant/kubectl_complete-tenant README.md "${stage}/"
  archive="kubectl-tenant_${VERSION}_${os}_${arch}.tar.gz"
  tar -C "${stage}" -czf "${OUT}/${archive}" kubectl-tenant kubectl_complete-tenant README.md
  rm -rf "${stage}"
  sum="$(sha256sum "${OUT}/${archive}" | cut -d' ' -f1)"
  cat >> "${manifest}" <<MANIFEST
    - selector:
        matchLabels:
          os: ${os}
          arch: ${arch}
      uri: https://downloads.example.com/tenant-apiserver/${VERSION}/${archive}
      sha256: ${sum}
      bin: kubectl-tenant
      files:
        - from: kubectl-tenant
          to: .
        - from: kubectl_complete-tenant
          to: .
        - from: README.md
          to: .
MANIFEST
  echo "built ${OUT}/${archive} in $(( $(date +%s) - start ))s"
done
echo "krew manifest: ${manifest} (kubectl krew install --manifest=${manifest} --archive=${OUT}/<archive>)"
