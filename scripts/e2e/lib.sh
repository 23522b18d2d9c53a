# Shared by the scripts in scripts/e2e/ (sourced, not run).
# ENTRYWAY: how to run the CLI; from a checkout, gateway/src/cli/main.ts through tsx.
E2E_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
ENTRYWAY=${ENTRYWAY:-"node $E2E_ROOT/node_modules/tsx/dist/cli.mjs $E2E_ROOT/gateway/src/cli/main.ts"}
RELEASE=${RELEASE:-entryway}
NAMESPACE=${NAMESPACE:-entryway}
E2E_DIR=${E2E_DIR:-$E2E_ROOT/.e2e}
mkdir -p "$E2E_DIR"

die() {
  echo "e2e: $*" >&2
  exit 1
}

# Forwards a local port to a Service until the calling script exits; prints nothing.
forward() {
  local service=$1 local_port=$2 remote_port=$3
  kubectl -n "$NAMESPACE" port-forward "svc/$service" "$local_port:$remote_port" >"$E2E_DIR/forward-$service.log" 2>&1 &
  local pid=$!
  # shellcheck disable=SC2064 # the pid is meant to be expanded now
  trap "kill $pid 2>/dev/null || true" EXIT
  for _ in $(seq 1 50); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$local_port") 2>/dev/null; then return 0; fi
    sleep 0.2
  done
  die "port-forward to $service did not open 127.0.0.1:$local_port: $(cat "$E2E_DIR/forward-$service.log")"
}
