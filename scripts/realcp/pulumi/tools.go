//go:build tools

// Package tools pins the Pulumi CLI's main package in this wrapper module, so `go build` can build it.
package tools

import _ "github.com/pulumi/pulumi/pkg/v3/cmd/pulumi"
