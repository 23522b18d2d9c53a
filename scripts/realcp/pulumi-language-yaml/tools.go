//go:build tools

// Package tools pins the YAML language host's main package in this wrapper module, so `go build` can build it.
package tools

import _ "github.com/pulumi/pulumi-yaml/cmd/pulumi-language-yaml"
