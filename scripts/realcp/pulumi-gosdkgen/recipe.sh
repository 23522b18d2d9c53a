# Generates a Pulumi package's Go SDK from its schema.json with Pulumi's own Go code generator
# (github.com/pulumi/pulumi/pkg/v3/codegen/go, the one `pulumi package gen-sdk --language go` runs
# through pulumi-language-go, a nested module the module proxy here refuses), offline:
#   pulumi-gosdkgen <schema.json> <out dir>
# Same Pulumi version as the `pulumi` tool, so its sources are already in the module cache.
# test/provider/go-example.test.ts vets examples/go against the SDK it writes.
VERSION=v3.276.0

build() {
  go mod tidy
  go build -trimpath -ldflags "-s -w" -o "$out/bin/pulumi-gosdkgen" .
}
