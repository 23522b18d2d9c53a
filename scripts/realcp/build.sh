#!/usr/bin/env bash
# Builds the real tools the tests run (Kubernetes control plane, Pulumi CLI and providers, Helm 4
# and 3, ...) from their Go modules, into a cache outside the repository, and reuses them:
#
#   bash scripts/realcp/build.sh [TOOL...]        build what is missing (default: every tool)
#   bash scripts/realcp/build.sh --bin-dir TOOL   build TOOL if missing, then print its bin folder
#   bash scripts/realcp/build.sh --list           the tools, one per line
#   bash scripts/realcp/build.sh --check          exit 0 when every tool is in the cache, else 1
#
# Each tool is a folder beside this script: recipe.sh (VERSION, and a build function that writes
# binaries into "$out/bin"), plus the Go wrapper module it builds from. The cache entry is
#   ${ENTRYWAY_REALCP_CACHE:-$HOME/.cache/entryway-realcp}/<tool>@<VERSION>-go<go version>-<recipe hash>/
# where the recipe hash covers the tool's folder and go-env.sh (the build environment every recipe
# runs in), so a changed recipe builds anew and an unchanged one is reused at once. One line per tool on stdout: "realcp: <tool>@<version> built
# (N s)" or "... reused (0 s)". A tool that cannot be built ends the script with
# "realcp: error: <tool>: <why>" on stderr (the full log kept) and exit 1: never a silent skip.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cache_root="${ENTRYWAY_REALCP_CACHE:-$HOME/.cache/entryway-realcp}"

fail() {
  echo "realcp: error: $*" >&2
  exit 1
}

tools() { find "$here" -mindepth 2 -maxdepth 2 -name recipe.sh -printf '%h\n' | xargs -n1 basename | sort; }

command -v go >/dev/null || fail "no go on PATH: the real control plane, Pulumi and Helm are built from Go modules (install Go >= 1.26)"
go_version=$(go env GOVERSION)

# The cache entry of one tool: its folder's contents and the build environment, hashed.
entry_of() {
  local tool=$1 version hash
  version=$(sed -n 's/^VERSION=//p' "$here/$tool/recipe.sh" | tr -d '"')
  hash=$( (cd "$here" && find "$tool" -type f -print0 | sort -z | xargs -0 sha256sum; sha256sum go-env.sh) | sha256sum | cut -c1-12)
  echo "$cache_root/$tool@$version-$go_version-$hash"
}

build_one() {
  local tool=$1 entry started log
  [ -f "$here/$tool/recipe.sh" ] || fail "$tool: no such tool (scripts/realcp/$tool/recipe.sh); tools: $(tools | tr '\n' ' ')"
  entry=$(entry_of "$tool")
  local version=${entry##*/}
  version=${version#"$tool@"}
  version=${version%%-go*}
  mkdir -p "$cache_root"
  # One builder per entry at a time: parallel test files wait for the first one's build.
  exec {lock}>"$entry.lock"
  flock "$lock"
  if [ -f "$entry/.complete" ]; then
    echo "realcp: $tool@$version reused (0 s) $entry/bin"
    flock -u "$lock"
    return
  fi
  echo "realcp: $tool@$version building from Go modules (first run only; see $here/$tool/recipe.sh for how long it takes) ..."
  started=$(date +%s)
  rm -rf "$entry.partial"
  mkdir -p "$entry.partial/bin" "$entry.partial/src"
  log="$entry.log"
  if ! (
    set -euo pipefail
    trap 'rm -rf "$entry.partial/src"' EXIT
    # shellcheck source=/dev/null
    source "$here/$tool/recipe.sh"
    out="$entry.partial"
    src="$entry.partial/src"
    cp -r "$here/$tool/." "$src/"
    cd "$src"
    # shellcheck source=go-env.sh
    source "$here/go-env.sh"
    build
  ) >"$log" 2>&1; then
    flock -u "$lock"
    rm -rf "$entry.partial"
    fail "$tool@$version: build failed: $(grep -m1 -E 'go: |error|cannot|refused|not available|Forbidden' "$log" | cut -c1-300 || tail -n1 "$log"); full log: $log"
  fi
  rm -rf "$entry.partial/src"
  touch "$entry.partial/.complete"
  rm -rf "$entry"
  mv "$entry.partial" "$entry"
  echo "realcp: $tool@$version built ($(($(date +%s) - started)) s) $entry/bin"
  flock -u "$lock"
}

case "${1:-}" in
  --list)
    tools
    ;;
  --check)
    for tool in $(tools); do [ -f "$(entry_of "$tool")/.complete" ] || exit 1; done
    ;;
  --bin-dir)
    [ -n "${2:-}" ] || fail "--bin-dir needs a tool: $(tools | tr '\n' ' ')"
    build_one "$2" >&2
    echo "$(entry_of "$2")/bin"
    ;;
  *)
    if [ "$#" -eq 0 ]; then mapfile -t wanted < <(tools); else wanted=("$@"); fi
    for tool in "${wanted[@]}"; do build_one "$tool"; done
    ;;
esac
