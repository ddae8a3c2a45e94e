#!/usr/bin/env bash
# Regenerates artifacts/host-crds: the CustomResourceDefinitions of the host
# cluster's networking stack that the syncer writes objects of, at the versions
# pinned in hack/tools/crds/go.mod.
#
#   - OVN-Kubernetes: generated with controller-gen from the go-controller API
#     types (the project ships no CRD manifests in that module), so the CEL
#     rules (x-kubernetes-validations) of the types are enforced by the host.
#   - MetalLB and FRR-k8s: copied from each module's config/crd/bases.
#   - KubeVirt VirtualMachine, VirtualMachineInstance,
#     VirtualMachineInstanceReplicaSet and VirtualMachinePool: generated with
#     controller-gen from the kubevirt.io/api types (floats allowed: KubeVirt's
#     types have some), without KubeVirt's subresources and printer columns.
#     The replica sets and pools carry VM templates the guard policies check.
#   - CDI DataVolume: generated with controller-gen from the
#     kubevirt.io/containerized-data-importer-api types (the VM disks
#     tenants import or clone), without CDI's printer columns.
#   - Metal3 BareMetalHost: generated with controller-gen from the
#     github.com/metal3-io/baremetal-operator/apis metal3.io/v1alpha1 types
#     (floats allowed: the inspected CPU clock is one), with their status
#     subresource (the baremetal-operator, or the stack's stand-in for it,
#     writes status through it) and printer columns. Only BareMetalHost: the
#     servers the provider registers, which tenants claim; the package's
#     other kinds (firmware, data images, update policies...) are the
#     operator's own business.
#   - OpenShift ClusterResourceQuota: copied from the openshift/api module
#     pinned in hack/tools/openshift/go.mod (quota/v1's generated CRD
#     manifest): the schema of the ClusterResourceQuota a tenant's compute
#     quota is on OpenShift (docs/quota.md). No OpenShift controller runs in
#     the stack: the host only validates it.
#   - NetworkAttachmentDefinition (Multus): copied from the
#     network-attachment-definition-client module's artifacts/networks-crd.yaml.
#     OVN-Kubernetes renders every user-defined network into one in each
#     namespace it selects; tenants must not write them (the guard policies).
#   - Gateway API GatewayClass, Gateway, HTTPRoute, GRPCRoute and
#     ReferenceGrant: copied from the standard channel of the gateway-api
#     module pinned in hack/tools/gatewayapi/go.mod (config/crd/standard).
#     Tenants publish HTTP services with HTTPRoutes attached to the
#     provider's Gateway; these five are what the gateway the stack runs
#     (Traefik, hack/tools/traefik) watches without its experimental
#     channel. The channel's other kinds (BackendTLSPolicy, ListenerSet,
#     TCPRoute, TLSRoute, UDPRoute) are left out: nothing here serves
#     them, and a ListenerSet would add listeners to a shared Gateway. So
#     is its ValidatingAdmissionPolicy against mixing channels, which is
#     no CRD.
#
#   - cert-manager Certificate and Issuer, in the subdirectory cert-manager/
#     (which stacks do not install): copied from the cert-manager module
#     pinned in hack/tools/certmanager/go.mod (its deploy/crds, controller-gen
#     output); the kubernetes overlay of artifacts/deploy is checked against
#     them with a server-side dry run.
#   - prometheus-operator ServiceMonitor, in the subdirectory monitoring/
#     (which stacks do not install either): generated with controller-gen
#     from the monitoring API module pinned in hack/tools/monitoring/go.mod
#     (the module ships no CRD manifests); the overlays' ServiceMonitor is
#     checked against it with a server-side dry run.
#
# One file per CRD, named <group>_<plural>.yaml, each starting with a comment
# that names its source.
#
#   hack/update-host-crds.sh [output dir]    default: artifacts/host-crds
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CRDS_DIR=${ROOT}/hack/tools/crds
OUT_DIR=${1:-${ROOT}/artifacts/host-crds}

OVN_MODULE=github.com/ovn-kubernetes/ovn-kubernetes/go-controller
METALLB_MODULE=go.universe.tf/metallb
FRRK8S_MODULE=github.com/metallb/frr-k8s
NAD_MODULE=github.com/k8snetworkplumbingwg/network-attachment-definition-client
KUBEVIRT_MODULE=kubevirt.io/api
# The KubeVirt kinds tenants run VMs with; the package has others (KubeVirt, migrations, presets...).
KUBEVIRT_CRDS=(kubevirt.io_virtualmachines kubevirt.io_virtualmachineinstances kubevirt.io_virtualmachineinstancereplicasets)
# VirtualMachinePool, of the pool API package.
KUBEVIRT_POOL_CRDS=(pool.kubevirt.io_virtualmachinepools)
CDI_MODULE=kubevirt.io/containerized-data-importer-api
# The CDI kind that holds a VM's disk; the package has others (CDI, imports, clones...).
CDI_CRDS=(cdi.kubevirt.io_datavolumes)
METAL3_MODULE=github.com/metal3-io/baremetal-operator/apis
METAL3_CRDS=(metal3.io_baremetalhosts)

# The go-controller API packages whose kinds the syncer manages.
OVN_PACKAGES=(
  pkg/crd/clusternetworkconnect/v1 # ClusterNetworkConnect
  pkg/crd/egressip/v1              # EgressIP
  pkg/crd/egressservice/v1         # EgressService
  pkg/crd/routeadvertisements/v1   # RouteAdvertisements
  pkg/crd/userdefinednetwork/v1    # ClusterUserDefinedNetwork, UserDefinedNetwork
)

export GOWORK=off
export GOFLAGS="${GOFLAGS:+$(printf '%s' "${GOFLAGS}" | sed -E 's/(^| )-mod=[^ ]*//g')}"

"${ROOT}/hack/build-tools.sh" controller-gen >/dev/null
CONTROLLER_GEN=${ROOT}/_output/bin/controller-gen

WORK_DIR=$(mktemp -d)
trap 'rm -rf "${WORK_DIR}"' EXIT

cd "${CRDS_DIR}"
go mod download "${OVN_MODULE}" "${METALLB_MODULE}" "${FRRK8S_MODULE}" "${NAD_MODULE}" "${KUBEVIRT_MODULE}" "${CDI_MODULE}" "${METAL3_MODULE}" sigs.k8s.io/controller-tools

module_dir() { go list -m -f '{{.Dir}}' "$1"; }
module_ref() { go list -m -f '{{.Path}}@{{.Version}}' "$1"; }

# emit <source yaml> <description of origin> writes one CRD into WORK_DIR/out
# as <group>_<plural>.yaml, after checking that the source file follows that
# naming (controller-gen's), with a header and no leading document separator.
emit() {
  local src=$1 origin=$2 base group plural
  base=$(basename "${src}" .yaml)
  group=${base%%_*}
  plural=${base#*_}
  if ! grep -q "^kind: CustomResourceDefinition$" "${src}" ||
    ! grep -q "^  name: ${plural}\.${group}$" "${src}"; then
    echo "${src}: not the CRD ${plural}.${group} its name implies" >&2
    exit 1
  fi
  {
    echo "# Code generated by hack/update-host-crds.sh from ${origin}. DO NOT EDIT."
    sed '1{/^---$/d}' "${src}"
  } >"${WORK_DIR}/out/${group}_${plural}.yaml"
}

mkdir -p "${WORK_DIR}/ovn" "${WORK_DIR}/out"

paths=()
for pkg in "${OVN_PACKAGES[@]}"; do
  paths+=("paths=${OVN_MODULE}/${pkg}")
done
"${CONTROLLER_GEN}" crd:crdVersions=v1 "${paths[@]}" "output:crd:dir=${WORK_DIR}/ovn"
for f in "${WORK_DIR}"/ovn/*.yaml; do
  emit "${f}" "$(module_ref "${OVN_MODULE}") with controller-gen $(module_ref sigs.k8s.io/controller-tools | cut -d@ -f2)"
done

for module in "${METALLB_MODULE}" "${FRRK8S_MODULE}"; do
  dir=$(module_dir "${module}")
  for f in "${dir}"/config/crd/bases/*.yaml; do
    emit "${f}" "$(module_ref "${module}") config/crd/bases/$(basename "${f}")"
  done
done

# frr-k8s declares its ASNs (uint32) as "format: int32" with "maximum:
# 4294967295"; kube-apiserver 1.36 refuses every object that sets one
# ("Maximum boundary value must be of type integer with format int32").
# The one change made to an upstream CRD: those fields become int64, with
# the same bounds.
frr=${WORK_DIR}/out/frrk8s.metallb.io_frrconfigurations.yaml
patched=$(awk -v out="${frr}.tmp" '{ lines[NR] = $0 } END {
  n = 0
  for (i = 1; i <= NR; i++) {
    if (lines[i] ~ /^ *format: int32$/ && lines[i+1] ~ /^ *maximum: 4294967295$/) { sub(/int32/, "int64", lines[i]); n++ }
    print lines[i] > out
  }
  print n
}' "${frr}")
if [[ "${patched}" != 2 ]]; then
  echo "${frr}: expected the 2 ASN fields of frr-k8s (router, neighbor) declared int32 with maximum 4294967295, found ${patched}: review the patch above" >&2
  exit 1
fi
mv "${frr}.tmp" "${frr}"
sed -i '1s/$/ ASN fields: format int64 (see hack\/update-host-crds.sh)./' "${frr}"

mkdir -p "${WORK_DIR}/kubevirt"
"${CONTROLLER_GEN}" crd:crdVersions=v1,allowDangerousTypes=true "paths=${KUBEVIRT_MODULE}/core/v1" "output:crd:dir=${WORK_DIR}/kubevirt"
for crd in "${KUBEVIRT_CRDS[@]}"; do
  emit "${WORK_DIR}/kubevirt/${crd}.yaml" "$(module_ref "${KUBEVIRT_MODULE}") core/v1 with controller-gen $(module_ref sigs.k8s.io/controller-tools | cut -d@ -f2)"
done

mkdir -p "${WORK_DIR}/kubevirt-pool"
"${CONTROLLER_GEN}" crd:crdVersions=v1,allowDangerousTypes=true "paths=${KUBEVIRT_MODULE}/pool/v1alpha1" "output:crd:dir=${WORK_DIR}/kubevirt-pool"
for crd in "${KUBEVIRT_POOL_CRDS[@]}"; do
  emit "${WORK_DIR}/kubevirt-pool/${crd}.yaml" "$(module_ref "${KUBEVIRT_MODULE}") pool/v1alpha1 with controller-gen $(module_ref sigs.k8s.io/controller-tools | cut -d@ -f2)"
done

mkdir -p "${WORK_DIR}/cdi"
"${CONTROLLER_GEN}" crd:crdVersions=v1,allowDangerousTypes=true "paths=${CDI_MODULE}/pkg/apis/core/v1beta1" "output:crd:dir=${WORK_DIR}/cdi"
for crd in "${CDI_CRDS[@]}"; do
  emit "${WORK_DIR}/cdi/${crd}.yaml" "$(module_ref "${CDI_MODULE}") pkg/apis/core/v1beta1 with controller-gen $(module_ref sigs.k8s.io/controller-tools | cut -d@ -f2)"
done

mkdir -p "${WORK_DIR}/metal3"
"${CONTROLLER_GEN}" crd:crdVersions=v1,allowDangerousTypes=true "paths=${METAL3_MODULE}/metal3.io/v1alpha1" "output:crd:dir=${WORK_DIR}/metal3"
for crd in "${METAL3_CRDS[@]}"; do
  emit "${WORK_DIR}/metal3/${crd}.yaml" "$(module_ref "${METAL3_MODULE}") metal3.io/v1alpha1 with controller-gen $(module_ref sigs.k8s.io/controller-tools | cut -d@ -f2)"
done

# The module names its CRD file networks-crd.yaml: give it the name emit checks.
mkdir -p "${WORK_DIR}/nad"
cp "$(module_dir "${NAD_MODULE}")/artifacts/networks-crd.yaml" "${WORK_DIR}/nad/k8s.cni.cncf.io_network-attachment-definitions.yaml"
emit "${WORK_DIR}/nad/k8s.cni.cncf.io_network-attachment-definitions.yaml" "$(module_ref "${NAD_MODULE}") artifacts/networks-crd.yaml"

# openshift/api has a module of its own (hack/tools/openshift), whose CRD
# file is named for the cluster-version operator: give it emit's name.
OPENSHIFT_DIR=${ROOT}/hack/tools/openshift
(cd "${OPENSHIFT_DIR}" && go mod download github.com/openshift/api)
openshift_dir=$(cd "${OPENSHIFT_DIR}" && go list -m -f '{{.Dir}}' github.com/openshift/api)
openshift_ref=$(cd "${OPENSHIFT_DIR}" && go list -m -f '{{.Path}}@{{.Version}}' github.com/openshift/api)
mkdir -p "${WORK_DIR}/openshift"
crq=quota/v1/zz_generated.crd-manifests/0000_03_config-operator_01_clusterresourcequotas.crd.yaml
cp "${openshift_dir}/${crq}" "${WORK_DIR}/openshift/quota.openshift.io_clusterresourcequotas.yaml"
emit "${WORK_DIR}/openshift/quota.openshift.io_clusterresourcequotas.yaml" "${openshift_ref} ${crq}"

# The Gateway API has a module of its own (hack/tools/gatewayapi); its
# standard channel's files already have emit's names.
GATEWAYAPI_DIR=${ROOT}/hack/tools/gatewayapi
GATEWAYAPI_MODULE=sigs.k8s.io/gateway-api
GATEWAYAPI_CRDS=(gateway.networking.k8s.io_gatewayclasses gateway.networking.k8s.io_gateways
  gateway.networking.k8s.io_httproutes gateway.networking.k8s.io_grpcroutes gateway.networking.k8s.io_referencegrants)
(cd "${GATEWAYAPI_DIR}" && go mod download "${GATEWAYAPI_MODULE}")
gatewayapi_dir=$(cd "${GATEWAYAPI_DIR}" && go list -m -f '{{.Dir}}' "${GATEWAYAPI_MODULE}")
gatewayapi_ref=$(cd "${GATEWAYAPI_DIR}" && go list -m -f '{{.Path}}@{{.Version}}' "${GATEWAYAPI_MODULE}")
for crd in "${GATEWAYAPI_CRDS[@]}"; do
  emit "${gatewayapi_dir}/config/crd/standard/${crd}.yaml" "${gatewayapi_ref} config/crd/standard/${crd}.yaml"
done

# cert-manager has a module of its own (hack/tools/certmanager); its CRDs
# go to a subdirectory that no stack installs.
CERTMANAGER_DIR=${ROOT}/hack/tools/certmanager
CERTMANAGER_MODULE=github.com/cert-manager/cert-manager
CERTMANAGER_CRDS=(cert-manager.io_certificates cert-manager.io_issuers)
(cd "${CERTMANAGER_DIR}" && go mod download "${CERTMANAGER_MODULE}")
certmanager_dir=$(cd "${CERTMANAGER_DIR}" && go list -m -f '{{.Dir}}' "${CERTMANAGER_MODULE}")
certmanager_ref=$(cd "${CERTMANAGER_DIR}" && go list -m -f '{{.Path}}@{{.Version}}' "${CERTMANAGER_MODULE}")
mkdir -p "${WORK_DIR}/out/cert-manager"
for crd in "${CERTMANAGER_CRDS[@]}"; do
  emit "${certmanager_dir}/deploy/crds/${crd}.yaml" "${certmanager_ref} deploy/crds/${crd}.yaml"
  mv "${WORK_DIR}/out/${crd}.yaml" "${WORK_DIR}/out/cert-manager/"
done

# The monitoring API has a module of its own (hack/tools/monitoring);
# controller-gen runs there, so it loads the types at that module's pins.
# The package has every prometheus-operator kind: only ServiceMonitor is kept.
MONITORING_DIR=${ROOT}/hack/tools/monitoring
MONITORING_MODULE=github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring
MONITORING_CRDS=(monitoring.coreos.com_servicemonitors)
(cd "${MONITORING_DIR}" && go mod download "${MONITORING_MODULE}")
monitoring_ref=$(cd "${MONITORING_DIR}" && go list -m -f '{{.Path}}@{{.Version}}' "${MONITORING_MODULE}")
mkdir -p "${WORK_DIR}/monitoring" "${WORK_DIR}/out/monitoring"
(cd "${MONITORING_DIR}" && "${CONTROLLER_GEN}" crd:crdVersions=v1 "paths=${MONITORING_MODULE}/v1" "output:crd:dir=${WORK_DIR}/monitoring")
for crd in "${MONITORING_CRDS[@]}"; do
  emit "${WORK_DIR}/monitoring/${crd}.yaml" "${monitoring_ref} v1 with controller-gen $(module_ref sigs.k8s.io/controller-tools | cut -d@ -f2)"
  mv "${WORK_DIR}/out/${crd}.yaml" "${WORK_DIR}/out/monitoring/"
done

SUBDIRS=(cert-manager monitoring)
for sub in "${SUBDIRS[@]}"; do
  mkdir -p "${OUT_DIR}/${sub}"
  rm -f "${OUT_DIR}/${sub}"/*.yaml
done
rm -f "${OUT_DIR}"/*.yaml
cp "${WORK_DIR}"/out/*.yaml "${OUT_DIR}/"
chmod 0644 "${OUT_DIR}"/*.yaml
for sub in "${SUBDIRS[@]}"; do
  cp "${WORK_DIR}/out/${sub}"/*.yaml "${OUT_DIR}/${sub}/"
  chmod 0644 "${OUT_DIR}/${sub}"/*.yaml
done
echo "wrote $(find "${WORK_DIR}/out" -name '*.yaml' | wc -l) CRDs to ${OUT_DIR#"${ROOT}/"}"
