#!/usr/bin/env bash
# Builds the binaries of the integration test stack into _output/bin from the
# versions pinned in hack/tools/go.mod (etcd, kube-apiserver,
# kube-controller-manager, kubectl) and
# hack/tools/crds/go.mod (controller-gen, MetalLB controller),
# hack/tools/ovnkube/go.mod (OVN-Kubernetes' ovnkube),
# hack/tools/traefik/go.mod (Traefik, the Gateway API implementation the
# stack runs with Options.Gateway), the Open vSwitch and
# OVN command-line tools ovnkube looks up at start (ovs-cli: Debian's
# packages, unpacked, not installed), OVN 26.03 and Open vSwitch 4.0 for the
# stack's data path (ovn: Debian sid's packages with sid's libc, unpacked,
# run through their own loader), the linter make test runs
# (golangci-lint, GOLANGCI_LINT_VERSION below), and kubectl one minor version
# older than the stack (skew-kubectl, from hack/tools/skew/go.mod), which the
# tests drive the API with as the version skew policy allows.
#
#   hack/build-tools.sh                 build every tool that is missing or stale
#   hack/build-tools.sh stack           build those the local stack runs (make run)
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
OVNKUBE_DIR=${ROOT}/hack/tools/ovnkube
SKEW_DIR=${ROOT}/hack/tools/skew
TRAEFIK_DIR=${ROOT}/hack/tools/traefik
BIN_DIR=${ROOT}/_output/bin
LOG_DIR=${ROOT}/_output/log/build-tools

STACK_TOOLS=(kube-apiserver kube-controller-manager etcd kubectl controller-gen metallb-controller ovnkube ovs-cli ovn)
ALL_TOOLS=("${STACK_TOOLS[@]}" traefik golangci-lint skew-kubectl)

# The linter of make test (.golangci.yml), built with its own go.mod.
GOLANGCI_LINT_VERSION=v2.15.0

# The Debian packages with the command-line tools that ovnkube looks up on
# PATH when it starts (ovs-vsctl, ovs-ofctl, ovs-appctl, ovsdb-client,
# ovsdb-tool, ovn-nbctl, ovn-sbctl, ovn-appctl). Cluster-manager never runs
# them; they are unpacked into _output/bin/ovs-cli, not installed.
OVS_CLI_PACKAGES=(openvswitch-common openvswitch-switch ovn-common)

# OVN of the stack's data path: the NB/SB ovsdb-servers, ovn-northd,
# ovn-nbctl/sbctl and ovn-trace that ovnkube-controller and the data-path
# tests use, and ovs-vswitchd and ovn-controller for its real-packet tier.
# The pinned go-controller's ovnkube-controller needs the northbound schema
# of OVN 25.09 or later; bookworm has 23.03, trixie 25.03, sid 26.03. Sid
# moves: PACKAGES in the tree records what was taken, and a later OVN's
# schemas only add to what the controller needs. Sid's binaries need sid's
# libc: OVN_PACKAGES are the programs and every library they link that
# bookworm's are too old for or lacks, from the sid suite of the machine's
# own Debian archive. They are unpacked into _output/bin/ovn/root
# and run through that tree's loader by the wrappers in _output/bin/ovn/bin.
OVN_SUITE=sid
OVN_PACKAGES=(ovn-central ovn-common ovn-host openvswitch-common openvswitch-switch
  libc6 libgcc-s1 libcap-ng0 libcap2 libssl3t64 libunbound8 libevent-2.1-7t64
  libbpf1 libelf1t64 libxdp1 libnuma1 libudev1 zlib1g libzstd1)
# The programs that get a wrapper in _output/bin/ovn/bin.
OVN_PROGRAMS=(usr/sbin/ovsdb-server usr/bin/ovsdb-tool usr/bin/ovsdb-client usr/bin/ovn-northd
  usr/bin/ovn-nbctl usr/bin/ovn-sbctl usr/bin/ovn-trace usr/bin/ovn-appctl usr/bin/ovs-appctl
  usr/bin/ovs-vsctl usr/bin/ovs-ofctl usr/bin/ovn-controller usr/lib/openvswitch-switch/ovs-vswitchd)

# Release version stamped into the Kubernetes binaries; it must match the
# k8s.io/kubernetes requirement in hack/tools/go.mod (checked below).
KUBE_VERSION=v1.36.3

# The tools modules are self-contained: a go.work elsewhere in the tree, or a
# GOFLAGS=-mod=... from the caller, must not change what they resolve to.
export GOWORK=off
export GOFLAGS="${GOFLAGS:+$(printf '%s' "${GOFLAGS}" | sed -E 's/(^| )-mod=[^ ]*//g')}"

usage() {
  echo "usage: $0 [stack | ${ALL_TOOLS[*]}...]" >&2
  exit 2
}

# module_version <go.mod> <module path> prints the version required there.
module_version() {
  awk -v m="$2" '$1 == m && $2 ~ /^v/ {print $2; exit}' "$1"
}

# kube_ldflags prints the -ldflags that stamp the release version into
# kube-apiserver, kube-controller-manager and kubectl, as the Kubernetes
# release build does. The module zip carries no git metadata: gitCommit stays
# empty and the build date is the module version's publication time, so the
# binaries are reproducible.
kube_ldflags() {
  local major minor date pkg flags=""
  major=${KUBE_VERSION#v}; major=${major%%.*}
  minor=${KUBE_VERSION#v"${major}".}; minor=${minor%%.*}
  date=$(cd "${TOOLS_DIR}" && go list -m -f '{{.Time.UTC.Format "2006-01-02T15:04:05Z"}}' k8s.io/kubernetes) || return 1
  # The binaries report component-base's version; client-go's copy is what
  # client-go puts in its default User-Agent.
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
    kube-apiserver|kube-controller-manager|kubectl)
      echo "${KUBE_VERSION} ${KUBE_LDFLAGS}"
      cat "${TOOLS_DIR}/go.mod" "${TOOLS_DIR}/go.sum"
      ;;
    etcd)
      cat "${TOOLS_DIR}/go.mod" "${TOOLS_DIR}/go.sum"
      ;;
    controller-gen)
      cat "${CRDS_DIR}/go.mod" "${CRDS_DIR}/go.sum"
      ;;
    ovnkube)
      cat "${OVNKUBE_DIR}/go.mod" "${OVNKUBE_DIR}/go.sum"
      ;;
    traefik)
      cat "${TRAEFIK_DIR}/go.mod" "${TRAEFIK_DIR}/go.sum"
      declare -f build_traefik
      ;;
    ovs-cli)
      echo "${OVS_CLI_PACKAGES[*]}"
      ;;
    ovn)
      echo "${OVN_SUITE} ${OVN_PACKAGES[*]} ${OVN_PROGRAMS[*]}"
      declare -f build_ovn ovn_wrapper
      ;;
    metallb-controller)
      echo "go.universe.tf/metallb/controller@$(module_version "${CRDS_DIR}/go.mod" go.universe.tf/metallb)"
      ;;
    golangci-lint)
      echo "github.com/golangci/golangci-lint/v2/cmd/golangci-lint@${GOLANGCI_LINT_VERSION}"
      ;;
    skew-kubectl)
      cat "${SKEW_DIR}/go.mod" "${SKEW_DIR}/go.sum" "${SKEW_DIR}/main.go"
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

# KUBE_SERVERS are the long builds. They share most of their packages, so
# they are built by one go build (which compiles the shared packages once),
# in the background, while the other tools build.
KUBE_SERVERS=(kube-apiserver kube-controller-manager)

# build_kube_servers <dir> <name>... builds k8s.io/kubernetes/cmd/<name> into
# <dir>/<name>. Niced: it runs next to the foreground builds.
build_kube_servers() {
  local dir=$1 pkgs=() name
  shift
  for name; do pkgs+=("k8s.io/kubernetes/cmd/${name}"); done
  (cd "${TOOLS_DIR}" && nice go build -trimpath -o "${dir}/" -ldflags "${KUBE_LDFLAGS}" "${pkgs[@]}")
}

build_kubectl() {
  go_build "${TOOLS_DIR}" "$1" -ldflags "${KUBE_LDFLAGS}" k8s.io/kubernetes/cmd/kubectl
}

# build_skew_kubectl builds hack/tools/skew (kubectl from the k8s.io/kubectl
# library it pins), stamped with that library's release version as the
# Kubernetes release build stamps kubectl.
build_skew_kubectl() {
  local lib version major minor flags="-s -w" pkg
  lib=$(module_version "${SKEW_DIR}/go.mod" k8s.io/kubectl) || return 1
  version="v1.${lib#v0.}"
  major=1 minor=${version#v1.}; minor=${minor%%.*}
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    flags+=" -X ${pkg}.gitVersion=${version} -X ${pkg}.gitMajor=${major} -X ${pkg}.gitMinor=${minor} -X ${pkg}.gitTreeState=clean"
  done
  go_build "${SKEW_DIR}" "$1" -ldflags "${flags}" .
}

build_controller_gen() {
  go_build "${CRDS_DIR}" "$1" sigs.k8s.io/controller-tools/cmd/controller-gen
}

# build_ovnkube builds cmd/ovnkube of the go-controller module pinned in
# hack/tools/ovnkube/go.mod (its own module: its dependency graph is not the
# one the host CRDs are generated from).
build_ovnkube() {
  go_build "${OVNKUBE_DIR}" "$1" -ldflags "-s -w" github.com/ovn-kubernetes/ovn-kubernetes/go-controller/cmd/ovnkube
}

# build_traefik builds cmd/traefik of the Traefik release pinned in
# hack/tools/traefik/go.mod, with the version and build date stamped in as
# Traefik's release build does (it logs them at start); the date is the
# module version's publication time, as for the Kubernetes binaries.
# Niced: it is the longest build after kube-apiserver's (about 17 CPU
# minutes; 25 minutes measured on 2 cores shared with other builds).
build_traefik() {
  local version date pkg=github.com/traefik/traefik/v3/pkg/version
  version=$(cd "${TRAEFIK_DIR}" && go list -m -f '{{.Version}}' github.com/traefik/traefik/v3) || return 1
  date=$(cd "${TRAEFIK_DIR}" && go list -m -f '{{.Time.UTC.Format "2006-01-02T15:04:05Z"}}' github.com/traefik/traefik/v3) || return 1
  (cd "${TRAEFIK_DIR}" && nice go build -trimpath -o "$1" \
    -ldflags "-s -w -X ${pkg}.Version=${version} -X ${pkg}.BuildDate=${date}" \
    github.com/traefik/traefik/v3/cmd/traefik)
}

# build_ovs_cli downloads OVS_CLI_PACKAGES from Debian's archive (apt-get
# download: no root needed once the package lists exist; apt-get update
# first when they do not) and unpacks them into the directory $1, whose
# usr/bin the stack puts on ovnkube's PATH.
build_ovs_cli() {
  local dir=$1 debs
  command -v apt-get >/dev/null || { echo "ovs-cli: needs apt-get (Debian's ${OVS_CLI_PACKAGES[*]})" >&2; return 1; }
  debs=$(mktemp -d "${BIN_DIR}/.ovs-cli-debs.XXXXXX") || return 1
  if ! (cd "${debs}" && apt-get download -q "${OVS_CLI_PACKAGES[@]}" >/dev/null 2>&1); then
    echo "ovs-cli: refreshing the package lists (apt-get update)"
    apt-get update -q >/dev/null && (cd "${debs}" && apt-get download -q "${OVS_CLI_PACKAGES[@]}" >/dev/null) || { rm -rf "${debs}"; return 1; }
  fi
  mkdir -p "${dir}" || return 1
  local deb
  for deb in "${debs}"/*.deb; do
    dpkg-deb -x "${deb}" "${dir}" || { rm -rf "${debs}"; return 1; }
    printf "%s=%s\n" "$(dpkg-deb -f "${deb}" Package)" "$(dpkg-deb -f "${deb}" Version)" >>"${dir}/PACKAGES"
  done
  rm -rf "${debs}"
  cat "${dir}/PACKAGES"
}

# build_ovn downloads OVN_PACKAGES of OVN_SUITE with a private apt
# configuration (its own package lists, checked against the machine's
# Debian archive keyring; nothing of the machine's apt state is touched),
# unpacks them into $1/root and writes a wrapper per program of
# OVN_PROGRAMS into $1/bin.
build_ovn() {
  local dir=$1 apt uri opts deb prog
  command -v apt-get >/dev/null || { echo "ovn: needs apt-get (Debian ${OVN_SUITE}'s ${OVN_PACKAGES[*]})" >&2; return 1; }
  uri=$(sed -n 's/^URIs: *\([^ ]*debian\)$/\1/p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -1)
  uri=${uri:-http://deb.debian.org/debian}
  apt=$(mktemp -d "${BIN_DIR}/.ovn-apt.XXXXXX") || return 1
  mkdir -p "${apt}/lists/partial" "${apt}/cache/archives/partial" "${apt}/debs" "${apt}/preferences.d" || return 1
  echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] ${uri} ${OVN_SUITE} main" >"${apt}/sources.list"
  opts=(-o "Dir::Etc::SourceList=${apt}/sources.list" -o Dir::Etc::SourceParts=/dev/null
    -o "Dir::Etc::PreferencesParts=${apt}/preferences.d" -o "Dir::State::Lists=${apt}/lists"
    -o "Dir::Cache=${apt}/cache" -o Dir::State::status=/dev/null -o Debug::NoLocking=1
    -o APT::Sandbox::User=root)
  echo "ovn: reading ${OVN_SUITE}'s package lists"
  apt-get "${opts[@]}" -q update >/dev/null &&
    (cd "${apt}/debs" && apt-get "${opts[@]}" -q download "${OVN_PACKAGES[@]}" >/dev/null) || { rm -rf "${apt}"; return 1; }
  mkdir -p "${dir}/root" "${dir}/bin" || return 1
  for deb in "${apt}"/debs/*.deb; do
    dpkg-deb -x "${deb}" "${dir}/root" || { rm -rf "${apt}"; return 1; }
    printf "%s=%s\n" "$(dpkg-deb -f "${deb}" Package)" "$(dpkg-deb -f "${deb}" Version)" >>"${dir}/PACKAGES"
  done
  rm -rf "${apt}"
  for prog in "${OVN_PROGRAMS[@]}"; do
    ovn_wrapper "${prog}" >"${dir}/bin/${prog##*/}" && chmod +x "${dir}/bin/${prog##*/}" || return 1
  done
  "${dir}/bin/ovn-northd" --version | head -1 || return 1
  # The commands a user runs against the stack's databases, in _output/bin.
  for prog in ovn-nbctl ovn-sbctl ovn-trace; do
    ln -sfn "ovn/bin/${prog}" "${BIN_DIR}/${prog}" || return 1
  done
}

# ovn_wrapper <program> prints the wrapper that runs <program> of the
# unpacked tree through the tree's own loader, with the tree's libraries,
# wherever the tree is (the wrapper may be reached through a symlink).
ovn_wrapper() {
  cat <<WRAPPER
#!/bin/sh
root=\$(dirname "\$(readlink -f "\$0")")/../root
exec "\$root/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2" \\
  --library-path "\$root/usr/lib/x86_64-linux-gnu:\$root/lib/x86_64-linux-gnu" \\
  "\$root/$1" "\$@"
WRAPPER
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

# build_golangci_lint, like MetalLB, uses the linter's own go.mod and go.sum.
build_golangci_lint() {
  local gobin
  gobin=$(mktemp -d "${BIN_DIR}/.golangci-lint.XXXXXX") &&
    (cd "${gobin}" && GOBIN="${gobin}" go install -trimpath "github.com/golangci/golangci-lint/v2/cmd/golangci-lint@${GOLANGCI_LINT_VERSION}") &&
    mv "${gobin}/golangci-lint" "$1" &&
    rm -rf "${gobin}"
}

# build <name>... builds binaries into a temporary directory, then moves each
# and its stamp into place, so an interrupted build never leaves a stale
# binary that looks current. Several names are built together; only
# KUBE_SERVERS can be. Failures are returned explicitly: build runs in
# contexts (if, ||, background jobs) where errexit does not apply.
build() {
  local tmp start=${SECONDS} name
  tmp="${BIN_DIR}/.$(IFS=+; echo "$*").tmp"
  for name; do
    rm -f "${BIN_DIR}/.${name}.stamp" || return 1
  done
  rm -rf "${tmp}" && mkdir -p "${tmp}" || return 1
  if [[ " ${KUBE_SERVERS[*]} " == *" $1 "* ]]; then
    build_kube_servers "${tmp}" "$@" || return 1
  else
    "build_${1//-/_}" "${tmp}/$1" || return 1
  fi
  for name; do
    # ovs-cli is a directory: mv would move it into the old one.
    rm -rf "${BIN_DIR:?}/${name}" || return 1
    mv -f "${tmp}/${name}" "${BIN_DIR}/${name}" || return 1
    stamp_of "${name}" >"${BIN_DIR}/.${name}.stamp" || return 1
  done
  rm -rf "${tmp}"
  echo "built $* in $((SECONDS - start))s"
}

main() {
  local requested=("$@") name
  [[ ${#requested[@]} -gt 0 ]] || requested=("${ALL_TOOLS[@]}")
  [[ "${requested[*]}" != stack ]] || requested=("${STACK_TOOLS[@]}")
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
  for name in "${KUBE_SERVERS[@]}" kubectl; do
    if [[ " ${requested[*]} " == *" ${name} "* ]]; then
      KUBE_LDFLAGS=$(kube_ldflags)
      break
    fi
  done

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

  # kube-apiserver and kube-controller-manager are by far the longest builds:
  # one go build makes both in the background while the others build in the
  # foreground. The Go build cache is shared and safe for concurrent use.
  local servers=() bg_pid="" bg_log="" failed=0
  for name in "${todo[@]}"; do
    [[ " ${KUBE_SERVERS[*]} " != *" ${name} "* ]] || servers+=("${name}")
  done
  if [[ ${#servers[@]} -gt 0 ]]; then
    bg_log="${LOG_DIR}/$(IFS=+; echo "${servers[*]}").log"
    echo "building ${servers[*]} ${KUBE_VERSION} in the background (log: ${bg_log#"${ROOT}/"})"
    build "${servers[@]}" >"${bg_log}" 2>&1 &
    bg_pid=$!
  fi
  for name in "${todo[@]}"; do
    [[ " ${KUBE_SERVERS[*]} " != *" ${name} "* ]] || continue
    echo "building ${name}"
    if ! build "${name}"; then
      echo "FAILED: ${name}" >&2
      failed=1
    fi
  done
  if [[ -n "${bg_pid}" ]]; then
    if wait "${bg_pid}"; then
      cat "${bg_log}"
    else
      cat "${bg_log}" >&2
      echo "FAILED: ${servers[*]}" >&2
      failed=1
    fi
  fi
  return "${failed}"
}

main "$@"
