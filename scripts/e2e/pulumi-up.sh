#!/usr/bin/env bash
# `pulumi up` of the dev stack (Pulumi.dev.yaml) on the same cluster, with a local state backend.
# The one Secret the stack names but never makes (the second runner's token) is created as soon
# as the stack's namespace exists.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
export PULUMI_CONFIG_PASSPHRASE=${PULUMI_CONFIG_PASSPHRASE:-e2e-only}
mkdir -p "$E2E_DIR/pulumi-state"
cd "$E2E_ROOT"
pulumi login "file://$E2E_DIR/pulumi-state"
pulumi stack select dev --create --non-interactive
# kind has no load balancer: a LoadBalancer Service would never get an address, and Pulumi waits
# for one. Only this run's copy of Pulumi.dev.yaml changes.
pulumi config set --stack dev --path 'entryway:stack.connectGateway.serviceType' ClusterIP
pulumi up --yes --skip-preview --non-interactive --stack dev &
up=$!
for _ in $(seq 1 150); do
  kubectl get namespace entryway-dev >/dev/null 2>&1 && break
  sleep 2
done
kubectl -n entryway-dev create secret generic entryway-dev-rte-dc2 --from-literal=token="$(openssl rand -hex 24)" --dry-run=client -o yaml | kubectl apply -f -
wait "$up"
pulumi stack output --stack dev
