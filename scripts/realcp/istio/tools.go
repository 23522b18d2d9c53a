//go:build tools

// Package tools pins istioctl's main package in this wrapper module, so `go mod tidy` keeps what
// it needs and `go build` can build it beside the two commands under cmd/.
package tools

import _ "istio.io/istio/istioctl/cmd/istioctl"
