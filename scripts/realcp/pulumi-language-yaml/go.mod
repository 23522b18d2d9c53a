module entryway.local/realcp/pulumi-language-yaml

go 1.26.0

require github.com/pulumi/pulumi-yaml v1.25.0
