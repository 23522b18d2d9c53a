//go:build tools

// Package tools pins Helm 3's main package in this wrapper module, so `go build` can build it.
package tools

import _ "helm.sh/helm/v3/cmd/helm"
