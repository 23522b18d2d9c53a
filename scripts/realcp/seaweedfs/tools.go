//go:build tools

// Package tools pins SeaweedFS's main package (weed) in this wrapper module, so `go build` can build it.
package tools

import _ "github.com/seaweedfs/seaweedfs/weed"
