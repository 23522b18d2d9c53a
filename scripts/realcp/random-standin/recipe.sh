# A STAND-IN for pulumi-resource-random (see main.go for why, and what it models from the
# @pulumi/random SDK): only RandomPassword, over the real provider protocol, from the same
# github.com/pulumi/pulumi/sdk/v3 as the Pulumi CLI. First build: about 2 minutes.
VERSION=4.21.2-standin

build() {
  go mod tidy
  gofmt -l . | grep . && { echo "gofmt: the files above are not formatted"; return 1; }
  go vet .
  go build -trimpath -ldflags "-s -w" -o "$out/bin/pulumi-resource-random" .
}
