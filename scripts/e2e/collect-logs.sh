#!/usr/bin/env bash
# After a failed run: what the cluster says, into .e2e/logs for the workflow's artifact.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
mkdir -p "$E2E_DIR/logs"
kubectl get all,networkpolicies,gateways.networking.istio.io,envoyfilters.networking.istio.io -A -o wide >"$E2E_DIR/logs/objects.txt" 2>&1 || true
kubectl get events -A --sort-by=.lastTimestamp >"$E2E_DIR/logs/events.txt" 2>&1 || true
for ns in "$NAMESPACE" entryway-dev entryway-e2e-target istio-system; do
  for pod in $(kubectl -n "$ns" get pods -o name 2>/dev/null); do
    kubectl -n "$ns" logs "$pod" --all-containers --tail=500 >"$E2E_DIR/logs/$ns-${pod#pod/}.log" 2>&1 || true
  done
done
