//go:build tools

// Package crds pins controller-gen and the modules whose API types or CRD
// manifests become artifacts/host-crds (see hack/update-host-crds.sh). It is a
// module of its own so that neither controller-tools nor the OVN-Kubernetes,
// MetalLB and Metal3 dependency graphs can move the versions that
// kube-apiserver and kubectl are built with in hack/tools/go.mod. (The Metal3
// types do not compile at these pins: their webhooks need a controller-runtime
// older than client-go v0.36 allows. controller-gen only reads them.)
package crds

import (
	_ "github.com/k8snetworkplumbingwg/network-attachment-definition-client/pkg/apis/k8s.cni.cncf.io/v1"
	_ "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	_ "github.com/metallb/frr-k8s/api/v1beta1"
	_ "github.com/ovn-kubernetes/ovn-kubernetes/go-controller/pkg/crd/clusternetworkconnect/v1"
	_ "github.com/ovn-kubernetes/ovn-kubernetes/go-controller/pkg/crd/egressip/v1"
	_ "github.com/ovn-kubernetes/ovn-kubernetes/go-controller/pkg/crd/egressservice/v1"
	_ "github.com/ovn-kubernetes/ovn-kubernetes/go-controller/pkg/crd/routeadvertisements/v1"
	_ "github.com/ovn-kubernetes/ovn-kubernetes/go-controller/pkg/crd/userdefinednetwork/v1"
	_ "go.universe.tf/metallb/api/v1beta1"
	_ "go.universe.tf/metallb/api/v1beta2"
	_ "kubevirt.io/api/core/v1"
	_ "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"
	_ "sigs.k8s.io/controller-tools/cmd/controller-gen"
)
