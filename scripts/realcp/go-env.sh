# The environment every recipe's build runs in (sourced by build.sh; part of every tool's cache key).
# Wrapper modules are resolved from their go.mod at build time (go mod tidy), so -mod=mod; static
# binaries, with no C toolchain needed.
export GOFLAGS=-mod=mod
export CGO_ENABLED=0
