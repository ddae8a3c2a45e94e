//go:build tools

// Package hack pins, through go.mod, the code generators that
// hack/update-codegen.sh runs.
package hack

import (
	_ "k8s.io/code-generator"
)
