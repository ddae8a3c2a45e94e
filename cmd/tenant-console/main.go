// Command tenant-console serves the tenant.io self-service web console: a
// thin client of the API that acts with the signed-in user's credentials.
package main

import (
	"os"

	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/component-base/cli"

	"tenant.io/tenant-apiserver/pkg/console"
)

func main() {
	ctx := genericapiserver.SetupSignalContext()
	os.Exit(cli.Run(console.NewCommand(ctx, console.NewOptions())))
}
