#!/usr/bin/env bash
# Builds the binaries of the integration test stack into _output/bin from the
# versions pinned in hack/tools/go.mod (etcd, kube-apiserver, kubectl) and
# hack/tools/crds/go.mod (controller-gen, MetalLB controller).
#
#   hack/build-tools.sh                 build every tool that is missing or stale
#   hack/build-tools.sh kubectl etcd    build only these
#
# A binary is rebuilt only when its stamp (_output/bin/.<name>.stamp, a sha256
# of the pins it is built from, the Go version and BUILD_TOOLS_VERSION) no
# longer matches, or when the binary is missing. FORCE=1 rebuilds regardless.
set -euo pipefail

# Bump when a change to this script must rebuild every binary.
BUILD_TOOLS_VERSION=1

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TOOLS_DIR=${ROOT}/hack/tools
CRDS_DIR=${ROOT}/hack/tools/crds
BIN_DIR=${ROOT}/_output/bin
LOG_DIR=${ROOT}/_output/log/build-tools

ALL_TOOLS=(kube-apiserver etcd kubectl controller-gen metallb-controller)

# Release version stamped into kube-apiserver and kubectl; it must match the
# k8s.io/kubernetes requirement in hack/tools/go.mod (checked below).
KUBE_VERSION=v1.36.3

# The tools modules are self-contained: a go.work elsewhere in the tree, or a
# GOFLAGS=-mod=... from the caller, must not change what they resolve to.
export GOWORK=off
export GOFLAGS="${GOFLAGS:+$(printf '%s' "${GOFLAGS}" | sed -E 's/(^| )-mod=[^ ]*//g')}"

usage() {
  echo "usage: $0 [${ALL_TOOLS[*]}]..." >&2
  exit 2
}

# module_version <go.mod> <module path> prints the version required there.
module_version() {
  awk -v m="$2" '$1 == m && $2 ~ /^v/ {print $2; exit}' "$1"
}

# kube_ldflags prints the -ldflags that stamp the release version into
# kube-apiserver and kubectl, as the Kubernetes release build does. The module
# zip carries no git metadata: gitCommit stays empty and the build date is the
# module version's publication time, so the binaries are reproducible.
kube_ldflags() {
  local major minor date pkg flags=""
  major=${KUBE_VERSION#v}; major=${major%%.*}
  minor=${KUBE_VERSION#v"${major}".}; minor=${minor%%.*}
  date=$(cd "${TOOLS_DIR}" && go list -m -f '{{.Time.UTC.Format "2006-01-02T15:04:05Z"}}' k8s.io/kubernetes) || return 1
  # kubectl and kube-apiserver report component-base's version; client-go's
  # copy is what client-go puts in its default User-Agent.
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    flags+=" -X ${pkg}.gitVersion=${KUBE_VERSION} -X ${pkg}.gitMajor=${major} -X ${pkg}.gitMinor=${minor}"
    flags+=" -X ${pkg}.gitCommit= -X ${pkg}.gitTreeState=clean -X ${pkg}.buildDate=${date}"
  done
  echo "-s -w${flags}"
}

# tool_inputs <name> prints everything the binary <name> is built from; its
# sha256 is the stamp.
tool_inputs() {
  echo "build-tools ${BUILD_TOOLS_VERSION} $1 $(go env GOVERSION GOOS GOARCH | tr '\n' ' ')"
  case "$1" in
    kube-apiserver|kubectl)
      echo "${KUBE_VERSION} ${KUBE_LDFLAGS}"
      cat "${TOOLS_DIR}/go.mod" "${TOOLS_DIR}/go.sum"
      ;;
    etcd)
      cat "${TOOLS_DIR}/go.mod" "${TOOLS_DIR}/go.sum"
      ;;
    controller-gen)
      cat "${CRDS_DIR}/go.mod" "${CRDS_DIR}/go.sum"
      ;;
    metallb-controller)
      echo "go.universe.tf/metallb/controller@$(module_version "${CRDS_DIR}/go.mod" go.universe.tf/metallb)"
      ;;
  esac
}

stamp_of() {
  tool_inputs "$1" | sha256sum | cut -d' ' -f1
}

up_to_date() {
  local name=$1
  [[ "${FORCE:-0}" != 1 && -x "${BIN_DIR}/${name}" && -f "${BIN_DIR}/.${name}.stamp" ]] &&
    [[ "$(cat "${BIN_DIR}/.${name}.stamp")" == "$(stamp_of "${name}")" ]]
}

# go_build <module dir> <output> <go build args...>
go_build() {
  local dir=$1 out=$2
  shift 2
  (cd "${dir}" && go build -trimpath -o "${out}" "$@")
}

# build_<name> <output> builds one binary to <output>.
build_etcd() {
  go_build "${TOOLS_DIR}" "$1" go.etcd.io/etcd/server/v3
}

build_kube_apiserver() {
  # Niced: it runs in the background while the smaller tools build.
  (cd "${TOOLS_DIR}" && nice go build -trimpath -o "$1" -ldflags "${KUBE_LDFLAGS}" k8s.io/kubernetes/cmd/kube-apiserver)
}

build_kubectl() {
  go_build "${TOOLS_DIR}" "$1" -ldflags "${KUBE_LDFLAGS}" k8s.io/kubernetes/cmd/kubectl
}

build_controller_gen() {
  go_build "${CRDS_DIR}" "$1" sigs.k8s.io/controller-tools/cmd/controller-gen
}

# build_metallb_controller uses MetalLB's own go.mod and go.sum (go install
# pkg@version), not our module graph; only the version comes from crds/go.mod.
build_metallb_controller() {
  local version gobin
  version=$(module_version "${CRDS_DIR}/go.mod" go.universe.tf/metallb)
  gobin=$(mktemp -d "${BIN_DIR}/.metallb.XXXXXX") &&
    (cd "${gobin}" && GOBIN="${gobin}" go install -trimpath "go.universe.tf/metallb/controller@${version}") &&
    mv "${gobin}/controller" "$1" &&
    rm -rf "${gobin}"
}

# build <name> builds one binary into a temporary file, then moves it and its
# stamp into place, so an interrupted build never leaves a stale binary that
# looks current. Failures are returned explicitly: build runs in contexts
# (if, ||, background jobs) where errexit does not apply.
build() {
  local name=$1 out="${BIN_DIR}/.$1.tmp" start=${SECONDS}
  rm -f "${BIN_DIR}/.${name}.stamp" || return 1
  "build_${name//-/_}" "${out}" || return 1
  mv -f "${out}" "${BIN_DIR}/${name}" || return 1
  stamp_of "${name}" >"${BIN_DIR}/.${name}.stamp" || return 1
  echo "built ${name} in $((SECONDS - start))s"
}

main() {
  local requested=("$@") name
  [[ ${#requested[@]} -gt 0 ]] || requested=("${ALL_TOOLS[@]}")
  for name in "${requested[@]}"; do
    [[ " ${ALL_TOOLS[*]} " == *" ${name} "* ]] || usage
  done

  local pinned
  pinned=$(module_version "${TOOLS_DIR}/go.mod" k8s.io/kubernetes)
  if [[ "${pinned}" != "${KUBE_VERSION}" ]]; then
    echo "hack/tools/go.mod pins k8s.io/kubernetes ${pinned} but KUBE_VERSION in $0 is ${KUBE_VERSION}; update both" >&2
    exit 1
  fi
  # Computed once, here, where errexit applies; only when needed, as it loads
  # the module graph of hack/tools.
  KUBE_LDFLAGS=""
  if [[ " ${requested[*]} " == *" kube-apiserver "* || " ${requested[*]} " == *" kubectl "* ]]; then
    KUBE_LDFLAGS=$(kube_ldflags)
  fi

  mkdir -p "${BIN_DIR}" "${LOG_DIR}"
  local todo=()
  for name in "${requested[@]}"; do
    if up_to_date "${name}"; then
      echo "${name}: up to date"
    else
      todo+=("${name}")
    fi
  done
  [[ ${#todo[@]} -gt 0 ]] || return 0

  # kube-apiserver is by far the longest build: run it in the background while
  # the others build in the foreground. The Go build cache is shared and safe
  # for concurrent use.
  local kas_pid="" failed=0
  for name in "${todo[@]}"; do
    if [[ "${name}" == kube-apiserver ]]; then
      echo "building kube-apiserver ${KUBE_VERSION} in the background (log: ${LOG_DIR#"${ROOT}/"}/kube-apiserver.log)"
      build kube-apiserver >"${LOG_DIR}/kube-apiserver.log" 2>&1 &
      kas_pid=$!
    fi
  done
  for name in "${todo[@]}"; do
    [[ "${name}" != kube-apiserver ]] || continue
    echo "building ${name}"
    if ! build "${name}"; then
      echo "FAILED: ${name}" >&2
      failed=1
    fi
  done
  if [[ -n "${kas_pid}" ]]; then
    if wait "${kas_pid}"; then
      cat "${LOG_DIR}/kube-apiserver.log"
    else
      cat "${LOG_DIR}/kube-apiserver.log" >&2
      echo "FAILED: kube-apiserver" >&2
      failed=1
    fi
  fi
  return "${failed}"
}

main "$@"
