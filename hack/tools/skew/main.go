// Command skew-kubectl is kubectl one minor version older than the stack's
// kube-apiserver, built from the pinned k8s.io/kubectl library: the oldest
// kubectl the Kubernetes version skew policy promises to work with the
// server, which the integration tests drive the tenant.io API with. It is
// not named kubectl-*, so kubectl does not take it for a plugin.
package main

import (
	"k8s.io/component-base/cli"
	"k8s.io/kubectl/pkg/cmd"
	"k8s.io/kubectl/pkg/cmd/util"
)

func main() {
	command := cmd.NewDefaultKubectlCommand()
	if err := cli.RunNoErrOutput(command); err != nil {
		util.CheckErr(err)
	}
}
