//go:build tools

// Package tools pins Helm 4's main package in this wrapper module, so `go build` can build it.
package tools

import _ "helm.sh/helm/v4/cmd/helm"
