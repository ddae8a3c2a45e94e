// Command kubectl-tenant is the kubectl plugin of tenant.io: on PATH, it is
// `kubectl tenant` (and `oc tenant`).
package main

import (
	"os"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"tenant.io/tenant-apiserver/pkg/plugin"
)

func main() {
	cmd := plugin.NewCommand(genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr})
	os.Exit(plugin.Run(cmd, os.Stderr))
}
