//go:build tools

// Package tools pins kwok's main package in this wrapper module, so `go build` can build it.
package tools

import _ "sigs.k8s.io/kwok/cmd/kwok"
