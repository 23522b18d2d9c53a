module entryway.local/realcp/seaweedfs

go 1.26.6

require github.com/seaweedfs/seaweedfs v0.0.0-20261109003541-7506e5f91cd6

// seaweedfs's own go.mod replaces this (replace lines of a dependency do not apply to its users).
replace github.com/tyler-smith/go-bip39 => github.com/cosmos/go-bip39 v1.0.0
