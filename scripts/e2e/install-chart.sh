#!/usr/bin/env bash
# Installs the whole chart with scripts/e2e/values.yaml: first the Secrets it names (random
# values, an ssh key made here for the workspace), then `helm install --wait`, then `helm test`.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
kubectl create namespace "$NAMESPACE" --dry-run=client -o yaml | kubectl apply -f -
kubectl create namespace entryway-e2e-target --dry-run=client -o yaml | kubectl apply -f -

secret() { # name, then --from-literal/--from-file arguments
  local name=$1
  shift
  kubectl -n "$NAMESPACE" create secret generic "$name" "$@" --dry-run=client -o yaml | kubectl apply -f -
}
secret e2e-ansibleforms-keys \
  --from-literal=encryption-secret="$(openssl rand -hex 16)" \
  --from-literal=access-token-secret="$(openssl rand -hex 32)" \
  --from-literal=admin-password="$(openssl rand -hex 16)"
secret e2e-ansibleforms-db --from-literal=password="$(openssl rand -hex 16)" --from-literal=root-password="$(openssl rand -hex 16)"
secret e2e-ansibleforms-rte --from-literal=token="$(openssl rand -hex 24)"
[[ -f $E2E_DIR/id_ed25519 ]] || ssh-keygen -q -t ed25519 -N "" -C entryway-e2e -f "$E2E_DIR/id_ed25519"
secret e2e-ssh-keys --from-file=authorized_keys="$E2E_DIR/id_ed25519.pub"

# No namespace-wide injection: the connect gateway's pods ask for Istio's proxy by their own
# label (sidecar.istio.io/inject), the rest stays out of the mesh.
helm upgrade --install "$RELEASE" "$E2E_ROOT/charts/entryway" -n "$NAMESPACE" -f "$E2E_ROOT/scripts/e2e/values.yaml" --wait --timeout 10m
helm test "$RELEASE" -n "$NAMESPACE" --logs --timeout 5m
