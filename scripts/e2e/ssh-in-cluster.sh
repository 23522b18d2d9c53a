#!/usr/bin/env bash
# ssh into the e2e workspace through the chart's CONNECT gateway Service (port-forwarded).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
forward "$RELEASE-connect-gateway" 12222 2222
GATEWAY=127.0.0.1:12222 WORKSPACE="$RELEASE-ws-e2e.$NAMESPACE.svc.cluster.local" SSH_USER=dev \
  IDENTITY_FILE="$E2E_DIR/id_ed25519" "$E2E_ROOT/scripts/e2e/ssh-through-gateway.sh"
