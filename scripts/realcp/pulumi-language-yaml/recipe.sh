# Pulumi YAML's language host (github.com/pulumi/pulumi-yaml, cmd/pulumi-language-yaml), which runs
# Pulumi.yaml programs such as examples/yaml. First build: about 8 minutes on 2 cores.
VERSION=v1.25.0

build() {
  go mod tidy
  go build -trimpath -ldflags "-s -w -X github.com/pulumi/pulumi-yaml/pkg/version.Version=$VERSION" \
    -o "$out/bin/pulumi-language-yaml" github.com/pulumi/pulumi-yaml/cmd/pulumi-language-yaml
}
