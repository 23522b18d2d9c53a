# SeaweedFS (github.com/seaweedfs/seaweedfs, Apache-2.0) as bin/weed: `weed server -s3` is the real
# S3-compatible object store the recording tests upload to (master, volume server, filer and S3 gateway
# in one process). The module proxy serves it as a pseudo-version (below: the 4.53 sources, per
# weed/util/version/constants.go). Its go.mod replaces github.com/tyler-smith/go-bip39 (deleted from
# GitHub) with github.com/cosmos/go-bip39; replace lines of a dependency do not apply to its users, so
# the wrapper's go.mod repeats it. The COMMIT version variable is set as its Makefile would from git.
# First build: about 39 minutes on 2 cores shared with other builds (load average near 20); a
# 160 MB binary.
VERSION=v0.0.0-20261109003541-7506e5f91cd6

build() {
  go mod tidy
  go build -trimpath \
    -ldflags "-s -w -X github.com/seaweedfs/seaweedfs/weed/util/version.COMMIT=${VERSION##*-}" \
    -o "$out/bin/weed" github.com/seaweedfs/seaweedfs/weed
}
