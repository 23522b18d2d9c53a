//go:build tools

// Package tools pins istioctl's, pilot-agent's and pilot-discovery's main packages in this wrapper
// module, so `go mod tidy` keeps what they need and `go build` can build them beside the two
// commands under cmd/.
package tools

import (
	_ "istio.io/istio/istioctl/cmd/istioctl"
	_ "istio.io/istio/pilot/cmd/pilot-agent"
	_ "istio.io/istio/pilot/cmd/pilot-discovery"
)
