# The Pulumi CLI (the engine) from github.com/pulumi/pulumi/pkg/v3, with its version set as the
# release build sets it (an empty version breaks the Automation API's minimum-version check).
# First build: about 15 minutes on 2 cores.
#
# The language hosts pulumi-language-nodejs and -python are nested modules of the same repository
# (sdk/nodejs/cmd/pulumi-language-nodejs/v3, sdk/python/cmd/pulumi-language-python/v3) that the
# module proxy here refuses ("403 Forbidden: This module version is not available", for @latest and
# for every pseudo-version tried), so they are not built: TypeScript and Python programs run as
# Automation API inline programs, whose language host runs inside the program (`--client`).
VERSION=v3.276.0

build() {
  go mod tidy
  go build -trimpath -ldflags "-s -w -X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=$VERSION" \
    -o "$out/bin/pulumi" github.com/pulumi/pulumi/pkg/v3/cmd/pulumi
}
