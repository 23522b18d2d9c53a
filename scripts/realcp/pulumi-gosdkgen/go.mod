module entryway.local/realcp/pulumi-gosdkgen

go 1.26.0

require github.com/pulumi/pulumi/pkg/v3 v3.276.0

// pkg/v3's own go.mod replaces these (replace lines of a dependency do not apply to its users).
replace github.com/atotto/clipboard => github.com/tgummerer/clipboard v0.0.0-20241001131231-d02d263e614e
