# The Kubernetes provider, pulumi-resource-kubernetes, from github.com/pulumi/pulumi-kubernetes/provider/v4.
# The module proxy serves one pseudo-version of it (below), the commit after the sdk v4.24.0 release,
# which we build as 4.25.0. Its main package embeds schema-embed.json and terraform-mapping-embed.json,
# which the release build makes with `go generate` (generate.go: schema.json with the version set) and
# which are not in the module: so the module is copied, generated, then built. Its go.mod replaces
# sdk/v4 with the repository's ../sdk folder, which the copy has not: the published sdk/v4 it requires
# is used instead. First build: about 12 minutes on 2 cores.
VERSION=4.25.0
MODULE=github.com/pulumi/pulumi-kubernetes/provider/v4@v4.0.0-20260115033456-f47bc2d6f199

build() {
  local dir
  dir=$(go mod download -json "$MODULE" | sed -n 's/^\s*"Dir": "\(.*\)",$/\1/p')
  [ -n "$dir" ] || { echo "go mod download $MODULE gave no folder"; return 1; }
  cp -r "$dir" provider
  chmod -R u+w provider
  cd provider
  go mod edit -dropreplace github.com/pulumi/pulumi-kubernetes/sdk/v4
  go mod tidy
  (cd cmd/pulumi-resource-kubernetes && VERSION=$VERSION go run generate.go)
  go build -trimpath -ldflags "-s -w -X github.com/pulumi/pulumi-kubernetes/provider/v4/pkg/version.Version=$VERSION" \
    -o "$out/bin/pulumi-resource-kubernetes" ./cmd/pulumi-resource-kubernetes
}
